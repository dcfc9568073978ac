import type { StateOutput } from '@cairn/core'
import type { OutputChange, Resource, ResourceChange, UnitDiff, Version } from '@cairn/contract'
import { attributeChanges, outputChanges, type OutputChanges } from './attribute-diff'
import { ADDED, CHANGED, REMOVED, type DiffTable } from './diff-table'
import { IndexReader, parseEntry, UnreadableIndexError } from '../stored-index/index-entries'
import { diffIndexes, toResource } from './index-diff'
import type { InstanceDetail } from '@cairn/state-scan'
import { encodeDiffCursor, type DiffCursor } from '../listing/page-cursor'
import type { IndexedInstance } from '../stored-index/resource-index'

/**
 * The most changed instances one answer gives the attributes of: their attributes are read from
 * both bodies in one pass, and held, so that pass is for one page.
 */
export const MAX_DETAIL_INSTANCES = 1000
/** How many detailed changes are worked out before they are handed on. */
const DETAIL_BATCH = 100

/** What a detailed diff reads from the two bodies: the wanted instances' attributes, the outputs. */
export interface DetailScan {
  before: ReadonlyMap<string, InstanceDetail>
  after: ReadonlyMap<string, InstanceDetail>
  /** The outputs' values, null when not read; `omitted` says why they are not shown. */
  outputs: { before: Outputs; after: Outputs; omitted?: string }
}

export type Outputs = Readonly<Record<string, StateOutput>> | null

/** One side of a diff: its table, how to read its index again, and what a bad read reports. */
export interface DiffSide {
  table: DiffTable
  open: (signal?: AbortSignal) => AsyncIterable<Uint8Array>
  unreadable: (error: UnreadableIndexError) => Error
}

/**
 * A diff as it is read: the three lists of resources stream in batches, in that order (added,
 * then removed, then changed: a page is a stretch of that sequence), then `outputs` and
 * `nextCursor` are known. Within each list, instances come in the order their state lists them.
 */
export interface DiffListing {
  unit: string
  from: Version | null
  to: Version
  resources: {
    added: AsyncIterable<readonly Resource[]>
    removed: AsyncIterable<readonly Resource[]>
    changed: AsyncIterable<readonly ResourceChange[]>
  }
  /** The outputs that changed (on the first page only: later pages answer none). */
  outputs(): Promise<OutputChanges>
  /**
   * Does now, before the first byte of a streamed answer, the work that can still fail on the
   * versions' content (a detailed diff's scan of both bodies), so that such a failure is answered
   * with its own status instead of cutting a streamed answer short. For an answer without a
   * limit; a page is gathered whole before it is answered.
   */
  prepare(): Promise<void>
  /** Either index stopped at its limit, so instances past it are not compared. */
  truncated: boolean
  /** How many instances are added, removed and changed in all, whatever the page. */
  counts: { added: number; removed: number; changed: number }
  /** Where the next page starts, once the lists are read; null on the last. */
  nextCursor(): string | null
}

export interface DiffWalkOptions {
  unit: string
  from: Version | null
  to: Version
  before: DiffSide | null
  after: DiffSide
  counts: { added: number; removed: number; changed: number }
  /** Where this page starts (the first page: part 0, entry 0), and how many it holds at most. */
  start: { part: 0 | 1 | 2; next: number }
  limit: number | undefined
  /** With detail: reads the wanted instances' attributes and the outputs from both bodies. */
  detail: ((wanted: ReadonlySet<string>) => Promise<DetailScan>) | undefined
  signal: AbortSignal | undefined
}

type Part = 0 | 1 | 2

/**
 * Walks the two matched indexes for one answer: each list reads its index again from the start,
 * stepping over the entries before the page and those of other kinds as bytes, and stops (closing
 * the body) once the page is full. Memory: the tables, one chunk, one batch, and with detail the
 * attributes of at most `MAX_DETAIL_INSTANCES` instances.
 */
export function diffListing(options: DiffWalkOptions): DiffListing {
  const walk = new DiffWalk(options)
  return {
    unit: options.unit,
    from: options.from,
    to: options.to,
    resources: {
      added: walk.part(0),
      removed: walk.part(1),
      changed: walk.changed(),
    },
    outputs: () => walk.outputs(),
    prepare: () => walk.prepare(),
    truncated:
      (options.before?.table.rest?.truncated ?? false) ||
      (options.after.table.rest?.truncated ?? false),
    counts: options.counts,
    nextCursor: () => walk.nextCursor(),
  }
}

class DiffWalk {
  readonly #options: DiffWalkOptions
  /** How many more this answer may hold. */
  #left: number
  /** Where the page filled up: the entry after its last. */
  #full: { part: Part; next: number } | undefined
  #detail: Promise<DetailScan> | undefined

  constructor(options: DiffWalkOptions) {
    this.#options = options
    this.#left = options.limit ?? Number.POSITIVE_INFINITY
  }

  /** The resources of one part (added or removed; changed without detail), as they are. */
  async *part(part: Part): AsyncGenerator<Resource[]> {
    for await (const batch of this.#entries(part)) yield batch.map(toResource)
  }

  /** The changed resources, each with its attributes when detail was asked (as far as it goes). */
  async *changed(): AsyncGenerator<ResourceChange[]> {
    const { detail } = this.#options
    if (detail === undefined) {
      yield* this.part(2)
      return
    }
    // The first changed instances of this answer, as many as one pass over the bodies serves;
    // the entries are read by hand, so that the walk goes on after them.
    const entries = this.#entries(2)
    try {
      const first: IndexedInstance[] = []
      let rest: IndexedInstance[] = []
      while (first.length < MAX_DETAIL_INSTANCES) {
        const next = await entries.next()
        if (next.done === true) break
        for (const instance of next.value) {
          if (first.length < MAX_DETAIL_INSTANCES) first.push(instance)
          else rest.push(instance)
        }
      }
      if (first.length > 0) {
        const scan = await this.#scan(detail, new Set(first.map((instance) => instance.address)))
        for (let at = 0; at < first.length; at += DETAIL_BATCH) {
          yield first.slice(at, at + DETAIL_BATCH).map((instance) => withDetail(instance, scan))
        }
      }
      if (rest.length > 0) yield rest.map(beyondDetail)
      rest = []
      for (let next = await entries.next(); next.done !== true; next = await entries.next()) {
        yield next.value.map(beyondDetail)
      }
    } finally {
      await entries.return(undefined)
    }
  }

  async outputs(): Promise<OutputChanges> {
    const { start, detail } = this.#options
    if (start.part !== 0 || start.next !== 0) return { added: [], removed: [], changed: [] }
    const rests = this.#outputRests()
    const any = rests.added.length + rests.removed.length + rests.changed.length > 0
    if (detail === undefined || !any) return outputChanges(rests, null, null)
    const scan = await this.#scan(detail, new Set())
    const shown = outputChanges(rests, scan.outputs.before, scan.outputs.after)
    const omitted = scan.outputs.omitted
    if (omitted === undefined) return shown
    const mark = <T extends OutputChange>(change: T): T => ({ ...change, detail_omitted: omitted })
    return {
      added: shown.added.map(mark),
      removed: shown.removed.map(mark),
      changed: shown.changed.map(mark),
    }
  }

  async prepare(): Promise<void> {
    const { detail, limit, start } = this.#options
    if (detail === undefined || limit !== undefined) return
    // Without a limit nothing is counted, so this walk of the changed entries leaves the answer's
    // own as it was; it finds the instances `changed` gives detail to, and the scan is the one
    // `changed` and `outputs` then share.
    const wanted = new Set<string>()
    for await (const batch of this.#entries(2)) {
      for (const instance of batch) {
        if (wanted.size === MAX_DETAIL_INSTANCES) break
        wanted.add(instance.address)
      }
      if (wanted.size === MAX_DETAIL_INSTANCES) break
    }
    const first = start.part === 0 && start.next === 0
    const rests = this.#outputRests()
    const outputs = first && rests.added.length + rests.removed.length + rests.changed.length > 0
    if (wanted.size > 0 || outputs) await this.#scan(detail, wanted)
  }

  #outputRests(): ReturnType<typeof diffIndexes>['outputs'] {
    const { before, after } = this.#options
    return diffIndexes(
      before?.table.rest === undefined ? null : { ...before.table.rest, resources: [] },
      { ...(after.table.rest as NonNullable<typeof after.table.rest>), resources: [] },
    ).outputs
  }

  nextCursor(): string | null {
    const full = this.#full
    if (full === undefined) return null
    const { before, after, from, to } = this.#options
    const remains =
      (full.part === 0 && after.table.anyFrom(ADDED, full.next)) ||
      (full.part <= 1 &&
        before?.table.anyFrom(REMOVED, full.part === 1 ? full.next : 0) === true) ||
      after.table.anyFrom(CHANGED, full.part === 2 ? full.next : 0)
    if (!remains) return null
    const cursor: DiffCursor = {
      from: from?.timestamp ?? null,
      to: to.timestamp,
      part: full.part,
      next: full.next,
    }
    return encodeDiffCursor(cursor)
  }

  /** The scan of the bodies, once for the answer: the first call's wanted instances. */
  #scan(
    detail: (wanted: ReadonlySet<string>) => Promise<DetailScan>,
    wanted: ReadonlySet<string>,
  ): Promise<DetailScan> {
    this.#detail ??= detail(wanted)
    return this.#detail
  }

  /**
   * The entries of one part that this answer lists, in batches: those of its kind from where the
   * page starts, until the page is full.
   */
  async *#entries(part: Part): AsyncGenerator<IndexedInstance[]> {
    const { start, before, after, signal } = this.#options
    if (part < start.part || this.#full !== undefined) return
    const side = part === 1 ? before : after
    if (side === null) return
    const kind = part === 0 ? ADDED : part === 1 ? REMOVED : CHANGED
    const from = part === start.part ? start.next : 0
    const { table } = side
    if (!table.anyFrom(kind, from)) return
    const reader = new IndexReader(side.open(signal), signal)
    let at = 0
    try {
      for await (const batch of reader.batches()) {
        const listed: IndexedInstance[] = []
        for (const bytes of batch) {
          const entry = at
          at += 1
          if (entry < from || table.state[entry] !== kind) continue
          listed.push(parseEntry(bytes))
          this.#left -= 1
          if (this.#left === 0) {
            this.#full = { part, next: entry + 1 }
            break
          }
        }
        if (listed.length > 0) yield listed
        // Full: the rest of the index is not read (leaving the loop closes its body).
        if (this.#full !== undefined) return
      }
    } catch (error) {
      throw error instanceof UnreadableIndexError ? side.unreadable(error) : error
    }
  }
}

function withDetail(instance: IndexedInstance, scan: DetailScan): ResourceChange {
  const resource = toResource(instance)
  const old = scan.before.get(instance.address)
  const now = scan.after.get(instance.address)
  if (old === undefined || now === undefined) {
    return {
      ...resource,
      detail_omitted: 'the detail limit of one answer was reached: ask for smaller pages (limit)',
    }
  }
  if (old.attributes === undefined || now.attributes === undefined) {
    return { ...resource, detail_omitted: 'the attributes are too large to compare' }
  }
  return {
    ...resource,
    attributes: attributeChanges(rawOf(old, old.attributes), rawOf(now, now.attributes)),
  }
}

function beyondDetail(instance: IndexedInstance): ResourceChange {
  return {
    ...toResource(instance),
    detail_omitted: `one answer gives the attributes of at most ${MAX_DETAIL_INSTANCES} instances: ask for pages of at most ${MAX_DETAIL_INSTANCES} (limit, cursor)`,
  }
}

function rawOf(
  detail: InstanceDetail,
  attributes: string,
): { attributes: string; sensitive?: string } {
  return detail.sensitive === undefined
    ? { attributes }
    : { attributes, sensitive: detail.sensitive }
}

/**
 * A diff's answer read whole into its wire shape: for a page (with a `limit`), whose size the
 * limit bounds; the server streams the others.
 */
export async function collectDiff(listing: DiffListing): Promise<UnitDiff> {
  const gather = async <T>(batches: AsyncIterable<readonly T[]>): Promise<T[]> => {
    const items: T[] = []
    for await (const batch of batches) for (const item of batch) items.push(item)
    return items
  }
  const added = await gather(listing.resources.added)
  const removed = await gather(listing.resources.removed)
  const changed = await gather(listing.resources.changed)
  return {
    unit: listing.unit,
    from: listing.from,
    to: listing.to,
    resources: { added, removed, changed },
    outputs: await listing.outputs(),
    truncated: listing.truncated,
    counts: listing.counts,
    next_cursor: listing.nextCursor(),
  }
}
