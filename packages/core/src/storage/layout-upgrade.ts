import * as v from 'valibot'
import { mapLimit } from '../concurrency/map-limit'
import { StorageUnavailableError } from '../errors'
import { markConsumer } from '../graph/consumer-marks'
import { edgeKey } from '../graph/graph-node'
import { UNIT_DELIMITER, UNITS_PREFIX, legacyUnitRecordKey, unitRecordKey } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import { UnitRecordSchema, type StoredEdge } from '../units/unit-record'
import { UnitRecordStore } from '../units/unit-record-store'
import { ownRecord } from '../validation'
import { LEGACY_KEYS, STORE_KEYS } from './key-layout'
import { collectBytes, PreconditionFailedError, type ObjectStore } from './object-store'
import { parseStored, readRecord, writeRecord } from './stored-json'

/**
 * The layout this core reads and writes. Layout 1 kept each unit record inside the unit's folder
 * (`units/<id>!/unit.json`) and the whole dependency graph in one object (`graph/graph.json`);
 * layout 2 keeps the records under `unit-records/`, one listing away, with each unit's edges in
 * its own record.
 */
export const STORE_LAYOUT = 2

const LayoutSchema = v.object({ layout: v.pipe(v.number(), v.integer(), v.minValue(1)) })

/** What layout 1's graph object held that layout 2 keeps: each unit's life and its edges. */
const LegacyGraphSchema = v.object({
  units: ownRecord(
    v.object({
      created: v.nullable(v.string()),
      version: v.nullable(v.object({ timestamp: v.string() })),
      dependencies: v.array(
        v.object({ from: v.string(), output: v.optional(v.string()), ack: v.nullable(v.string()) }),
      ),
    }),
  ),
})

/** What an upgrade did. */
export interface LayoutUpgrade {
  /**
   * The layout found; equal to `to` when there was nothing to do, a new store included (one that
   * holds nothing an older layout wrote is marked with the current layout, not upgraded).
   */
  from: number
  to: number
  /** Unit records moved to `unit-records/`. */
  records: number
  /** Units whose edges moved from the graph object into their records. */
  edges: number
}

const CONCURRENCY = 16
/** Where layout 1 kept the dependency graph (`LEGACY_KEYS`). */
const LEGACY_GRAPH_PREFIX = 'graph/'
const LISTING_PAGE = 1000

/**
 * Brings a store to the current layout before a server serves from it; a server runs this at
 * start. It is safe to run again at any point (a start cut short, several instances starting at
 * once over one bucket): each step checks what is there first, and `layout.json` is written last.
 * Every instance over one store must run the same version of Cairn: one of layout 1 would not see
 * what this one writes. A new store (nothing under `units/` or `graph/`, and no marker) is only
 * marked: it is written in the current layout from its first object on.
 *
 * @throws StorageUnavailableError when the store is in a newer layout than this core knows
 */
export async function upgradeLayout(store: ObjectStore): Promise<LayoutUpgrade> {
  const marker = await readRecord(store, STORE_KEYS.layout, LayoutSchema)
  const from = marker?.value.layout ?? 1
  if (from > STORE_LAYOUT) {
    throw new StorageUnavailableError(
      `the store is in layout ${String(from)}, newer than this version of Cairn reads (${String(STORE_LAYOUT)}): run a newer version`,
    )
  }
  if (from === STORE_LAYOUT) return { from, to: STORE_LAYOUT, records: 0, edges: 0 }
  if (marker === undefined && !(await holdsLayoutOne(store))) {
    await writeRecord(store, STORE_KEYS.layout, { layout: STORE_LAYOUT })
    return { from: STORE_LAYOUT, to: STORE_LAYOUT, records: 0, edges: 0 }
  }
  const records = await moveRecords(store)
  const edges = await moveEdges(store)
  await writeRecord(store, STORE_KEYS.layout, { layout: STORE_LAYOUT })
  return { from, to: STORE_LAYOUT, records, edges }
}

/**
 * The layout a store is in, read without changing it (for a reader that must not write, such as
 * an offline export): its marker, or 1 for a store holding what layout 1 wrote, or the current
 * layout for a new store.
 */
export async function storedLayout(store: ObjectStore): Promise<number> {
  const marker = await readRecord(store, STORE_KEYS.layout, LayoutSchema)
  if (marker !== undefined) return marker.value.layout
  return (await holdsLayoutOne(store)) ? 1 : STORE_LAYOUT
}

/** Whether the store holds anything layout 1 wrote that an upgrade moves: units, or the graph. */
async function holdsLayoutOne(store: ObjectStore): Promise<boolean> {
  const [units, graph] = await Promise.all([
    store.list({ prefix: UNITS_PREFIX, limit: 1 }),
    store.list({ prefix: LEGACY_GRAPH_PREFIX, limit: 1 }),
  ])
  return units.objects.length > 0 || graph.objects.length > 0
}

/** Moves every `units/<id>!/unit.json` to `unit-records/<id>!.json`, bytes unchanged. */
async function moveRecords(store: ObjectStore): Promise<number> {
  let moved = 0
  let cursor: string | undefined
  do {
    const page = await store.list({
      prefix: UNITS_PREFIX,
      delimiter: UNIT_DELIMITER,
      limit: LISTING_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    })
    const ids = page.prefixes.map((folder) => folder.slice(UNITS_PREFIX.length, -1) as UnitId)
    const done = await mapLimit(ids, CONCURRENCY, (id) => moveRecord(store, id))
    moved += done.filter(Boolean).length
    cursor = page.cursor
  } while (cursor !== undefined)
  return moved
}

async function moveRecord(store: ObjectStore, id: UnitId): Promise<boolean> {
  const old = await store.get(legacyUnitRecordKey(id))
  if (old === undefined) return false
  const bytes = await collectBytes(old.body)
  parseStored(UnitRecordSchema, bytes, `unit record ${legacyUnitRecordKey(id)}`)
  try {
    await store.put(unitRecordKey(id), bytes, {
      condition: { ifNoneMatch: '*' },
      contentType: 'application/json',
    })
  } catch (error) {
    // Another instance moved it first (or the unit was written since): the new one stands.
    if (!(error instanceof PreconditionFailedError)) throw error
  }
  await store.delete(legacyUnitRecordKey(id))
  return true
}

/** Puts each unit's edges from layout 1's graph object into its record, then drops the object. */
async function moveEdges(store: ObjectStore): Promise<number> {
  const stored = await readRecord(store, LEGACY_KEYS.graph, LegacyGraphSchema, 'the graph')
  let moved = 0
  if (stored !== undefined) {
    const records = new UnitRecordStore(store, () => Promise.resolve())
    const entries = Object.entries(stored.value.units).filter(
      ([, entry]) => entry.dependencies.length > 0,
    )
    const done = await mapLimit(entries, CONCURRENCY, ([id, entry]) =>
      records.update(id as UnitId, (current) => {
        // Only the life of the unit the graph knew, and only once.
        if (
          current?.record.created !== entry.created ||
          current.record.dependencies !== undefined
        ) {
          return Promise.resolve({ keep: true as const, result: false })
        }
        // A write whose graph step never ran (a crash) left its acknowledgements on its version.
        const latest = current.record.current
        const missed = latest !== null && latest.timestamp > (entry.version?.timestamp ?? '')
        const acks = new Map(
          (missed ? (latest.acks ?? []) : []).map((ack) => [edgeKey(ack), ack.digest]),
        )
        const dependencies = entry.dependencies.map((edge): StoredEdge => ({
          from: edge.from,
          ...(edge.output === undefined ? {} : { output: edge.output }),
          ack: acks.has(edgeKey(edge)) ? (acks.get(edgeKey(edge)) ?? null) : edge.ack,
        }))
        return markConsumer(
          store,
          id,
          dependencies.map((edge) => edge.from),
        ).then(() => ({ put: { ...current.record, dependencies }, result: true }))
      }),
    )
    moved = done.filter(Boolean).length
  }
  for (;;) {
    const marks = await store.list({ prefix: LEGACY_KEYS.graphPending, limit: LISTING_PAGE })
    if (marks.objects.length === 0) break
    await mapLimit(marks.objects, CONCURRENCY, ({ key }) => store.delete(key))
  }
  await store.delete(LEGACY_KEYS.graph)
  return moved
}
