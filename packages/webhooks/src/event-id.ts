import type { Clock, IdSource } from '@cairn/core'

/** Event IDs sort by time: `evt-<13-digit milliseconds>-<random>`. */
const EVENT_ID = /^evt-(\d{13})-([0-9a-z]+)$/
const LATEST = 9_999_999_999_999

/**
 * Makes event IDs that sort in the order this process made them (the milliseconds never step
 * back, even when the clock does), so a queue listed by key is in event order.
 *
 * @internal
 */
export class EventIds {
  readonly #clock: Clock
  readonly #ids: IdSource
  #last = 0

  constructor(clock: Clock, ids: IdSource) {
    this.#clock = clock
    this.#ids = ids
  }

  next(): string {
    const ms = Math.max(this.#clock.now(), this.#last + 1)
    this.#last = ms
    return `evt-${String(ms).padStart(13, '0')}-${this.#ids.token()}`
  }
}

/** When an event was made, from its ID; undefined for a name that is no event ID. */
export function eventTime(id: string): number | undefined {
  const match = EVENT_ID.exec(id)
  return match === null ? undefined : Number(match[1])
}

/** A key part that sorts events newest first: the inverted time, then the random part. */
export function newestFirst(id: string): string {
  const match = EVENT_ID.exec(id)
  if (match === null) return id
  return `${String(LATEST - Number(match[1])).padStart(13, '0')}-${match[2] ?? ''}`
}

/** Whether `text` is an event ID (a cursor, a key read back). */
export function isEventId(text: string): boolean {
  return EVENT_ID.test(text)
}
