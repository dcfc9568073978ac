import type { Clock } from '../runtime/clock'
import type { ObjectStore } from '../storage/object-store'
import type { SweptFolder } from './staged-uploads'
import { SweepLease } from './sweep-lease'

/** How often each instance looks for expired uploads, unless told otherwise. */
export const SWEEP_EVERY_MS = 10 * 60_000
/** The keys one call of a folder's sweep looks at. */
const KEYS_PER_CALL = 1000
/** The keys one pass looks at in a folder at most; the rest waits for the next pass. */
const KEYS_PER_PASS = 50_000

export interface StagedSweeperOptions {
  /**
   * How long past its lifetime an upload is kept, in milliseconds: at least the longest a request
   * begun within the lifetime may run, plus the clock difference between instances.
   */
  graceMs: number
  /** How often to sweep; `SWEEP_EVERY_MS` unless given. */
  everyMs?: number
  /** Hears of a folder's sweep that failed (storage down); the next pass tries again. */
  onError?: (error: unknown) => void
}

interface SweeperParts {
  store: ObjectStore
  clock: Clock
  /** Names this instance in the leases it takes. */
  owner: string
  /** The folders to sweep: every owner's that core has made staged uploads for. */
  folders: () => readonly SweptFolder[]
}

/**
 * Deletes expired staged uploads (TFE's pending state versions, S3 multipart uploads and their
 * parts) on a timer: once at start, then every `everyMs`, whether or not anyone creates another.
 * Each folder is swept by one instance at a time, the one that takes its lease for the period
 * (`SweepLease`); the others pass over it until the next period. An upload is deleted only once
 * past its lifetime and the grace, so a request that began within the lifetime never loses it.
 */
export class StagedSweeper {
  readonly #parts: SweeperParts
  readonly #options: StagedSweeperOptions
  readonly #lease: SweepLease
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #started = false
  #stopped = false

  /** @internal */
  constructor(parts: SweeperParts, options: StagedSweeperOptions) {
    this.#parts = parts
    this.#options = options
    this.#lease = new SweepLease(parts.store, parts.clock, parts.owner)
  }

  /** Sweeps now, then every period, in the background until `stop`. */
  start(): void {
    if (this.#started || this.#stopped) return
    this.#started = true
    this.#tick()
  }

  /** Lets a pass under way finish, and sweeps no more. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#running
  }

  /**
   * One pass: each folder whose lease this instance takes is swept until nothing expired is left,
   * or up to 50,000 keys. A folder that fails is reported and the others are still swept.
   *
   * @returns how many keys were deleted
   */
  async pass(): Promise<number> {
    const everyMs = this.#options.everyMs ?? SWEEP_EVERY_MS
    let deleted = 0
    for (const folder of this.#parts.folders()) {
      try {
        if (!(await this.#lease.take(folder.folder, everyMs))) continue
        for (let looked = 0; looked < KEYS_PER_PASS; looked += KEYS_PER_CALL) {
          const swept = await folder.sweep({
            graceMs: this.#options.graceMs,
            limit: KEYS_PER_CALL,
          })
          deleted += swept.deleted
          if (swept.done) break
        }
      } catch (error) {
        this.#options.onError?.(error)
      }
    }
    return deleted
  }

  #tick(): void {
    this.#running = this.pass().then(
      () => {
        this.#schedule()
      },
      (error: unknown) => {
        this.#options.onError?.(error)
        this.#schedule()
      },
    )
  }

  #schedule(): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      this.#tick()
    }, this.#options.everyMs ?? SWEEP_EVERY_MS)
    // The timer alone does not keep the process alive.
    this.#timer.unref()
  }
}
