import type { Clock } from '../runtime/clock'

/** A clock that moves only when told to. */
export class ManualClock implements Clock {
  #now: number

  constructor(start = Date.parse('2026-01-01T00:00:00.000Z')) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
  }

  set(ms: number): void {
    this.#now = ms
  }
}
