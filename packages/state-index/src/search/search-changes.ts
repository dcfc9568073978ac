import * as v from 'valibot'
import {
  randomIds,
  STORE_KEYS,
  systemClock,
  writeRecord,
  type Clock,
  type IdSource,
  type ObjectStore,
} from '@cairn/core'

/**
 * The change log every server instance's search index follows: one object per committed write,
 * restore or delete, `search/changes/<13-digit minute>/<13-digit ms>-<random>.json` holding
 * `{"unit": "<id>"}`. Keys sort by time, so an instance lists only what follows the last it read;
 * and in folders of a minute, so that the read of the last seconds before each search opens one
 * or two folders, however many entries the hour holds (on the fs store, listing one folder of
 * 10,000 entries took 15 ms). Entries of the layout before the folders
 * (`search/changes/<13-digit ms>-<random>.json`) sort among them by time and are read alike.
 */

/** The body of a change entry. */
export const SearchChangeSchema = v.object({ unit: v.string() })

/** How long change entries are kept; an instance that has not read the log for longer reconciles. */
export const SEARCH_CHANGE_RETENTION_MS = 60 * 60 * 1000

const TIME_DIGITS = 13

/** The span of time one folder of change entries holds. */
const FOLDER_MS = 60 * 1000

/** The key of a change entry written at `ms`. */
export function changeKey(ms: number, token: string): string {
  return `${changeMark(ms)}-${token}.json`
}

/**
 * The point in the log where entries written at `ms` start, to list after: its minute's folder,
 * then its time (`search/changes/1767225600000/1767225612345`).
 */
export function changeMark(ms: number): string {
  const time = Math.max(0, Math.floor(ms))
  return `${STORE_KEYS.searchChanges}${changeTime(time - (time % FOLDER_MS))}/${changeTime(time)}`
}

/** A time as change keys write it, in 13 digits: `1767225600000`. */
function changeTime(ms: number): string {
  return String(ms).padStart(TIME_DIGITS, '0')
}

/**
 * The time a change key was written at, or undefined when the key is not a change entry's (in a
 * minute's folder, or of the layout before them).
 */
export function changeKeyTime(key: string): number | undefined {
  const name = key.slice(STORE_KEYS.searchChanges.length)
  const found = /^(?:\d{13}\/)?(\d{13})-[^/]+\.json$/.exec(name)
  return found === null ? undefined : Number(found[1])
}

/**
 * Records that a unit changed (a write, restore or delete was committed), so every instance's
 * search index reloads it on its next search. Called by the write path before it answers.
 */
export async function announceSearchChange(
  store: ObjectStore,
  unit: string,
  options: { clock?: Clock; ids?: IdSource } = {},
): Promise<void> {
  const clock = options.clock ?? systemClock
  const ids = options.ids ?? randomIds
  // Create-only: a random name never replaces another instance's entry.
  await writeRecord(store, changeKey(clock.now(), ids.token()), { unit }, { ifNoneMatch: '*' })
}
