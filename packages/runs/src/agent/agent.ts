import type { Job } from '../run-service'
import type { AgentApi } from './agent-api'
import { AgentApiError } from './http-agent-api'
import { RunExecutor, type ExecutorOptions } from './run-executor'

/** How long one claim waits on the server for a run, in milliseconds. */
const CLAIM_WAIT_MS = 20_000
/** The longest pause between claims after the server could not be reached. */
const MAX_BACKOFF_MS = 30_000

export interface AgentOptions extends Omit<ExecutorOptions, 'api'> {
  api: AgentApi
  /** Hears of each run as it starts and ends, for the agent's own output. */
  onRun?: (event: { run: Job; outcome?: string }) => void
}

/**
 * An agent (DESIGN section 14): outbound only, it long-polls the server for a run, does it (one at
 * a time), and asks again. `stop` ends the wait; a run under way is interrupted and reported as
 * failed ("the agent was stopped"), so its lock is released at once rather than at the
 * heartbeat timeout.
 */
export class Agent {
  readonly #options: AgentOptions
  readonly #stopping = new AbortController()
  #current: RunExecutor | undefined
  #loop: Promise<void> | undefined
  /** Why the agent stopped on its own: the server refused its token. */
  refused: Error | undefined

  constructor(options: AgentOptions) {
    this.#options = options
  }

  start(): void {
    this.#loop ??= this.#run()
  }

  /** Resolves when the agent has stopped: asked to, or refused by the server (`refused`). */
  get finished(): Promise<void> {
    return this.#loop ?? Promise.resolve()
  }

  /** Stops claiming, interrupts the run under way, and resolves once it has been reported. */
  async stop(): Promise<void> {
    this.#stopping.abort()
    this.#current?.stop(`the agent ${this.#options.name} was stopped`)
    await this.#loop
  }

  #stopped(): boolean {
    return this.#stopping.signal.aborted
  }

  async #run(): Promise<void> {
    let backoff = 500
    const signal = this.#stopping.signal
    while (!this.#stopped()) {
      let job: Job | undefined
      try {
        job = await this.#options.api.claim(CLAIM_WAIT_MS, signal)
        backoff = 500
      } catch (error) {
        if (this.#stopped()) break
        if (error instanceof AgentApiError && error.status === 401) {
          // A revoked or unknown token: trying again changes nothing.
          this.refused = error
          break
        }
        this.#options.onError?.(error)
        await pause(backoff, signal)
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
        continue
      }
      if (job === undefined) continue
      this.#options.onRun?.({ run: job })
      const executor = new RunExecutor(this.#options, job)
      this.#current = executor
      if (this.#stopped()) executor.stop(`the agent ${this.#options.name} was stopped`)
      const outcome = await executor.run()
      this.#current = undefined
      this.#options.onRun?.({ run: job, outcome: outcome.status })
    }
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms)
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer)
        done()
      },
      { once: true },
    )
  })
}
