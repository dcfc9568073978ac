import * as v from 'valibot'
import {
  collectBytes,
  InvalidRequestError,
  listAllKeys,
  mapLimit,
  parseStored,
  PreconditionFailedError,
  readRecord,
  STORE_KEYS,
  writeRecord,
  type ObjectStore,
} from '@cairn/core'
import {
  DELIVERY_ERRORS,
  WEBHOOK_EVENTS,
  type Delivery,
  type DeliveryError,
  type WebhookEvent,
} from '@cairn/contract'
import { eventTime, isEventId, newestFirst } from './event-id'

/**
 * What a write path commit leaves before it commits: enough to tell afterwards, from the unit
 * record, whether the change was committed (`before`: the current version's timestamp, or for a
 * delete the unit's epoch; null when there was none).
 */
export const PreparedSchema = v.object({
  kind: v.picklist(['write', 'restore', 'delete']),
  before: v.nullable(v.string()),
})
export type Prepared = v.InferOutput<typeof PreparedSchema>

/**
 * An event as the queue keeps it: the body its deliveries send, as it was made (the contract's
 * `WebhookEventSchema` says what receivers get). The queue reads only what it routes and lists by;
 * the rest is kept as it was written, and sent as it is.
 */
const StoredEventSchema = v.looseObject({
  id: v.string(),
  type: v.picklist(WEBHOOK_EVENTS),
  time: v.string(),
  unit: v.string(),
})

/**
 * A finished delivery as `webhooks/done/` keeps it (the deliveries listing shows it as the
 * contract's `DeliverySchema`).
 */
const StoredDeliverySchema = v.object({
  id: v.string(),
  event: v.picklist(WEBHOOK_EVENTS),
  unit: v.string(),
  created: v.string(),
  state: v.picklist(['pending', 'delivered', 'failed']),
  attempts: v.number(),
  last_attempt: v.optional(v.string()),
  next_attempt: v.optional(v.string()),
  last_status: v.optional(v.number()),
  last_error: v.optional(v.string()),
})

/**
 * One event waiting for its delivery to one subscription: `webhooks/queue/<hook>/<event>.json`.
 * `prepared` entries are written before a commit and made `ready` after it; `lease` is held by
 * the instance delivering it.
 */
export const QueueEntrySchema = v.object({
  format: v.literal(1),
  state: v.picklist(['prepared', 'ready']),
  /** The event; a prepared entry's lacks what only the commit decides (the version). */
  event: StoredEventSchema,
  prepared: v.optional(PreparedSchema),
  attempts: v.number(),
  last_attempt: v.optional(v.string()),
  next_attempt: v.optional(v.string()),
  last_status: v.optional(v.number()),
  last_error: v.optional(v.string()),
  lease: v.optional(v.object({ owner: v.string(), until: v.string() })),
})
export type QueueEntry = v.InferOutput<typeof QueueEntrySchema>

/** A queue entry as listed, with the ETag that a conditional change of it names. */
export interface Queued {
  hook: string
  id: string
  etag: string
  entry: QueueEntry
}

/** How many queue entries one listing of a subscription's queue reads at once. */
const ENTRY_READS = 16
/** The most deliveries one page lists. */
export const MAX_DELIVERIES_PAGE = 100
const DEFAULT_DELIVERIES_PAGE = 20

/**
 * The delivery queue in the object store, shared by every instance:
 *
 * ```
 * webhooks/queue/<hook>/<event id>.json                  waiting: in event order per subscription
 * webhooks/done/<hook>/<inverted time>-<random>.json     delivered or failed: newest first
 * ```
 *
 * Every change of a waiting entry is conditional on the ETag it was read at, so two instances
 * never both claim one. Entries are parsed once per ETag by this process.
 *
 * @internal
 */
export class DeliveryQueue {
  readonly #store: ObjectStore
  readonly #parsed = new Map<string, { etag: string; entry: QueueEntry }>()

  constructor(store: ObjectStore) {
    this.#store = store
  }

  /** Adds an entry; returns its ETag. */
  async add(hook: string, entry: QueueEntry): Promise<string> {
    const info = await writeRecord(this.#store, queueKey(hook, entry.event.id), entry, {
      ifNoneMatch: '*',
    })
    return info.etag
  }

  /**
   * Replaces an entry read at `etag`; returns the new ETag, or undefined when it changed or went
   * meanwhile (another instance took it).
   */
  async replace(hook: string, entry: QueueEntry, etag: string): Promise<string | undefined> {
    try {
      const key = queueKey(hook, entry.event.id)
      return (await writeRecord(this.#store, key, entry, { ifMatch: etag })).etag
    } catch (error) {
      if (error instanceof PreconditionFailedError) return undefined
      throw error
    }
  }

  /** Removes an entry, if still as read at `etag` (any version without). */
  async remove(hook: string, id: string, etag?: string): Promise<boolean> {
    try {
      await this.#store.delete(queueKey(hook, id), etag === undefined ? {} : { ifMatch: etag })
      return true
    } catch (error) {
      if (error instanceof PreconditionFailedError) return false
      throw error
    }
  }

  /** Every entry waiting for `hook`, oldest event first. */
  async waiting(hook: string): Promise<Queued[]> {
    const folder = `${QUEUE}${hook}/`
    const listed: { key: string; etag: string }[] = []
    let cursor: string | undefined
    do {
      const page = await this.#store.list({
        prefix: folder,
        ...(cursor === undefined ? {} : { cursor }),
      })
      listed.push(...page.objects)
      cursor = page.cursor
    } while (cursor !== undefined)
    const read = await mapLimit(listed, ENTRY_READS, (object) => this.#read(object))
    const found: Queued[] = []
    read.forEach((item, index) => {
      const key = listed[index]?.key ?? ''
      const id = key.slice(folder.length, -'.json'.length)
      if (item !== undefined && isEventId(id)) found.push({ hook, id, ...item })
    })
    return found
  }

  /** Moves a finished entry to `done/`, as the deliveries listing shows it. */
  async finish(queued: Queued, delivery: Delivery): Promise<void> {
    await writeRecord(this.#store, doneKey(queued.hook, queued.id), delivery)
    await this.remove(queued.hook, queued.id)
  }

  /** The deliveries to `hook`, waiting and finished, newest event first. */
  async deliveries(
    hook: string,
    options: { limit?: number; cursor?: string },
  ): Promise<{ items: Delivery[]; nextCursor: string | null }> {
    const limit = options.limit ?? DEFAULT_DELIVERIES_PAGE
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DELIVERIES_PAGE) {
      throw new InvalidRequestError(`limit must be a whole number from 1 to ${MAX_DELIVERIES_PAGE}`)
    }
    const cursor = options.cursor
    if (cursor !== undefined && !/^\d{13}-[0-9a-z]+$/.test(cursor)) {
      throw new InvalidRequestError('cursor is not one this listing gave')
    }
    const after = (id: string) => cursor === undefined || newestFirst(id) > cursor
    const waiting = (await this.waiting(hook))
      .filter(({ id }) => after(id))
      .map(({ entry }) => deliveryOf(entry, 'pending'))
    const folder = `${DONE}${hook}/`
    const page = await this.#store.list({
      prefix: folder,
      limit: limit + 1,
      ...(cursor === undefined ? {} : { startAfter: `${folder}${cursor}.json` }),
    })
    const done = await mapLimit(page.objects, ENTRY_READS, async ({ key }) => {
      const stored = await readRecord(this.#store, key, StoredDeliverySchema, `delivery ${key}`)
      return stored === undefined ? undefined : coarse(stored.value)
    })
    const merged = [...waiting, ...done.filter((item) => item !== undefined)].sort((a, b) =>
      newestFirst(a.id) < newestFirst(b.id) ? -1 : 1,
    )
    const items = merged.slice(0, limit)
    const more = merged.length > limit || page.cursor !== undefined
    const last = items.at(-1)
    return { items, nextCursor: more && last !== undefined ? newestFirst(last.id) : null }
  }

  /** Deletes what `hook` left: its waiting and finished deliveries. */
  async drop(hook: string): Promise<void> {
    for (const folder of [`${QUEUE}${hook}/`, `${DONE}${hook}/`]) {
      const keys: string[] = []
      for await (const key of listAllKeys(this.#store, folder)) keys.push(key)
      await mapLimit(keys, ENTRY_READS, (key) => this.#store.delete(key))
    }
    for (const key of this.#parsed.keys()) {
      if (key.startsWith(`${QUEUE}${hook}/`)) this.#parsed.delete(key)
    }
  }

  /** Deletes the finished deliveries of `hook` whose events are older than `before` (ms). */
  async sweep(hook: string, before: number): Promise<number> {
    const old: string[] = []
    for await (const key of listAllKeys(this.#store, `${DONE}${hook}/`)) {
      const name = key.slice(key.lastIndexOf('/') + 1)
      const inverted = Number(name.slice(0, 13))
      if (Number.isFinite(inverted) && LATEST - inverted < before) old.push(key)
    }
    await mapLimit(old, ENTRY_READS, (key) => this.#store.delete(key))
    return old.length
  }

  async #read(object: { key: string; etag: string }) {
    const known = this.#parsed.get(object.key)
    if (known?.etag === object.etag) return known
    const stored = await this.#store.get(object.key)
    if (stored === undefined) return undefined
    const entry = parseStored(QueueEntrySchema, await collectBytes(stored.body), object.key)
    const parsed = { etag: stored.etag, entry }
    this.#parsed.set(object.key, parsed)
    if (this.#parsed.size > 10_000) this.#parsed.delete(this.#parsed.keys().next().value ?? '')
    return parsed
  }
}

const QUEUE = STORE_KEYS.webhookQueue
const DONE = STORE_KEYS.webhookDone
const LATEST = 9_999_999_999_999

function queueKey(hook: string, id: string): string {
  return `${QUEUE}${hook}/${id}.json`
}

function doneKey(hook: string, id: string): string {
  return `${DONE}${hook}/${newestFirst(id)}.json`
}

/** A queue entry as the deliveries listing shows it. */
export function deliveryOf(entry: QueueEntry, state: Delivery['state']): Delivery {
  const { event } = entry
  const created = eventTime(event.id)
  return coarse({
    id: event.id,
    event: event.type,
    unit: event.unit,
    created: created === undefined ? event.time : new Date(created).toISOString(),
    state,
    attempts: entry.attempts,
    ...(entry.last_attempt === undefined ? {} : { last_attempt: entry.last_attempt }),
    ...(state !== 'pending' || entry.next_attempt === undefined
      ? {}
      : { next_attempt: entry.next_attempt }),
    ...(entry.last_status === undefined ? {} : { last_status: entry.last_status }),
    ...(entry.last_error === undefined ? {} : { last_error: entry.last_error }),
  })
}

/**
 * A delivery as listed: an error recorded before errors were coarse (`connection refused`, `host
 * not found`) is shown as the coarse one it falls under.
 */
function coarse(delivery: Delivery): Delivery {
  const error = delivery.last_error
  if (error === undefined || isDeliveryError(error)) return delivery
  return { ...delivery, last_error: 'connection_failed' }
}

function isDeliveryError(text: string): text is DeliveryError {
  return (DELIVERY_ERRORS as readonly string[]).includes(text)
}

/** A new entry for an event: ready to deliver, or prepared before a commit. */
export function newEntry(event: WebhookEvent, prepared?: Prepared): QueueEntry {
  return {
    format: 1,
    state: prepared === undefined ? 'ready' : 'prepared',
    event,
    ...(prepared === undefined ? {} : { prepared }),
    attempts: 0,
  }
}
