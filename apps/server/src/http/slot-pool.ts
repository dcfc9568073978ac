/**
 * A bounded number of slots for one kind of costly request (a state upload, a heavy read), with a
 * share per holder: at most `limit` in use at once, at most `share` of them by any one holder (a
 * principal), so one caller cannot take every slot. A slot is taken before the costly work starts
 * and released exactly once when it ends, whichever way it ends.
 *
 * A slot may be reserved before its holder is known (an upload is counted before its caller has
 * been authenticated, so a flood of them is refused unread) and claimed for the holder later.
 */
export class SlotPool {
  readonly limit: number
  readonly share: number
  #inUse = 0
  readonly #held = new Map<string, number>()

  constructor(limit: number, share: number) {
    this.limit = limit
    this.share = Math.min(share, limit)
  }

  /** How many slots are in use. */
  get inUse(): number {
    return this.#inUse
  }

  /** How many slots `holder` has claimed. */
  heldBy(holder: string): number {
    return this.#held.get(holder) ?? 0
  }

  /** A slot whose holder is not known yet; undefined when every slot is in use. */
  reserve(): Slot | undefined {
    if (this.#inUse >= this.limit) return undefined
    this.#inUse += 1
    return new Slot(this)
  }

  /** A slot for `holder`, or why there is none: the pool is full, or the holder has its share. */
  take(holder: string): Slot | 'full' | 'share' {
    const slot = this.reserve()
    if (slot === undefined) return 'full'
    if (slot.claim(holder)) return slot
    slot.release()
    return 'share'
  }

  /** @internal */
  claimFor(holder: string): boolean {
    const held = this.#held.get(holder) ?? 0
    if (held >= this.share) return false
    this.#held.set(holder, held + 1)
    return true
  }

  /** @internal */
  free(holder: string | undefined): void {
    this.#inUse -= 1
    if (holder === undefined) return
    const held = (this.#held.get(holder) ?? 1) - 1
    if (held === 0) this.#held.delete(holder)
    else this.#held.set(holder, held)
  }
}

/** One slot of a `SlotPool`, in use until `release`. */
export class Slot {
  readonly #pool: SlotPool
  #holder: string | undefined
  #released = false

  constructor(pool: SlotPool) {
    this.#pool = pool
  }

  /** How many slots of its pool one holder may have. */
  get share(): number {
    return this.#pool.share
  }

  /** The holder it was claimed for, if it was. */
  get holder(): string | undefined {
    return this.#holder
  }

  /**
   * Counts the slot against `holder`'s share; false when the holder already has its share (the
   * slot is still in use: release it). Claiming again for the same holder is a no-op.
   */
  claim(holder: string): boolean {
    if (this.#released) throw new Error('a slot was claimed after its release')
    if (this.#holder !== undefined) return this.#holder === holder
    if (!this.#pool.claimFor(holder)) return false
    this.#holder = holder
    return true
  }

  /** Gives the slot back; only the first call counts. */
  release(): void {
    if (this.#released) return
    this.#released = true
    this.#pool.free(this.#holder)
  }
}
