import { mapLimit } from '../concurrency/map-limit'
import type { ObjectStore } from '../storage/object-store'
import { STORE_KEYS } from '../storage/key-layout'
import type { UnitId } from '../units/unit-id'
import type { UnitRecordStore } from '../units/unit-record-store'

/**
 * Who consumes each unit, for the one question the edges in unit records cannot answer without
 * reading every record: what lies downstream of a unit (a cycle check). Each edge has an empty
 * object `consumers/<upstream>!/<downstream>!`, written before the edge is (so an edge never
 * lacks its mark) and deleted after it is gone. A mark may outlive its edge (a declaration taken
 * back, a crash); readers check each against the downstream unit's record.
 *
 * ```
 * consumers/<upstream>!/<downstream>!    the downstream unit declared an edge from the upstream
 * ```
 */
const CONSUMERS_PREFIX = STORE_KEYS.consumers
const CONCURRENCY = 16
const LISTING_PAGE = 1000

export function consumerMark(upstream: string, downstream: string): string {
  return `${consumersFolder(upstream)}${downstream}!`
}

function consumersFolder(upstream: string): string {
  return `${CONSUMERS_PREFIX}${upstream}!/`
}

/** The units marked as consuming `upstream` (some may no longer have the edge). */
export async function markedConsumers(store: ObjectStore, upstream: string): Promise<string[]> {
  const folder = consumersFolder(upstream)
  const found: string[] = []
  let cursor: string | undefined
  do {
    const page = await store.list({
      prefix: folder,
      limit: LISTING_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    })
    for (const { key } of page.objects) {
      if (key.endsWith('!')) found.push(key.slice(folder.length, -1))
    }
    cursor = page.cursor
  } while (cursor !== undefined)
  return found
}

/** Marks `downstream` as a consumer of each of `upstreams`. */
export async function markConsumer(
  store: ObjectStore,
  downstream: string,
  upstreams: readonly string[],
): Promise<void> {
  await mapLimit(upstreams, CONCURRENCY, (upstream) =>
    store.put(consumerMark(upstream, downstream), new Uint8Array(0)),
  )
}

/** Removes the marks of `downstream` as a consumer of each of `upstreams`. */
export async function unmarkConsumer(
  store: ObjectStore,
  downstream: string,
  upstreams: readonly string[],
): Promise<void> {
  await mapLimit(upstreams, CONCURRENCY, (upstream) =>
    store.delete(consumerMark(upstream, downstream)),
  )
}

/**
 * The units that consume each of `units`, by their marks, kept only where the consumer's record
 * still has the edge: `[unit, consumer]` pairs.
 */
export async function consumersOf(
  store: ObjectStore,
  records: UnitRecordStore,
  units: readonly string[],
): Promise<[string, string][]> {
  const marked = await mapLimit(units, CONCURRENCY, async (unit) =>
    (await markedConsumers(store, unit)).map((consumer): [string, string] => [unit, consumer]),
  )
  const pairs = marked.flat()
  const consumers = [...new Set(pairs.map(([, consumer]) => consumer))]
  const found = new Map(
    await mapLimit(consumers, CONCURRENCY, async (consumer) => {
      return [consumer, (await records.read(consumer as UnitId))?.record] as const
    }),
  )
  // A mark may outlive its edge: the consumer's record says whether the edge is there.
  return pairs.filter(([unit, consumer]) =>
    (found.get(consumer)?.dependencies ?? []).some((edge) => edge.from === unit),
  )
}
