import * as v from 'valibot'
import { systemClock, type Clock } from '../runtime/clock'
import { randomIds, type IdSource } from '../runtime/id-source'
import { STORE_KEYS } from '../storage/key-layout'
import type { ObjectStore } from '../storage/object-store'
import { writeRecord } from '../storage/stored-json'

/**
 * The change log every server instance's search index follows: one object per committed write,
 * restore or delete, `search/changes/<13-digit ms>-<random>.json` holding `{"unit": "<id>"}`.
 * Keys sort by time, so an instance lists only what follows the last it read.
 */

/** The body of a change entry. */
export const SearchChangeSchema = v.object({ unit: v.string() })

/** How long change entries are kept; an instance that has not read the log for longer reconciles. */
export const SEARCH_CHANGE_RETENTION_MS = 60 * 60 * 1000

const TIME_DIGITS = 13

/** The key of a change entry written at `ms`. */
export function changeKey(ms: number, token: string): string {
  return `${STORE_KEYS.searchChanges}${changeTime(ms)}-${token}.json`
}

/** The part of a change key that names its time, to list after: `0001767225600000`. */
export function changeTime(ms: number): string {
  return String(Math.max(0, Math.floor(ms))).padStart(TIME_DIGITS, '0')
}

/** The time a change key was written at, or undefined when the key is not a change entry's. */
export function changeKeyTime(key: string): number | undefined {
  const name = key.slice(STORE_KEYS.searchChanges.length)
  if (!/^\d{13}-[^/]+\.json$/.test(name)) return undefined
  return Number(name.slice(0, TIME_DIGITS))
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
