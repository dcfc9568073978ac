import { bodyOf, collectBytes } from '@cairn/core'
import type { AgentIdentity } from '../agent-tokens'
import type { PlanCounts } from '../run-record'
import type { Directive, Job, RunService } from '../run-service'
import type { AgentApi, Outcome } from './agent-api'

/** The agents' side of a `RunService` in this process: the server's `-runs-local-agent`. */
export class LocalAgentApi implements AgentApi {
  readonly #runs: RunService
  readonly #agent: AgentIdentity

  constructor(runs: RunService, agent: AgentIdentity) {
    this.#runs = runs
    this.#agent = agent
  }

  claim(waitMs: number, signal: AbortSignal): Promise<Job | undefined> {
    return this.#runs.claimWithin(this.#agent, waitMs, signal)
  }

  async config(run: string): Promise<Buffer> {
    const job = await this.#runs.job(this.#agent, run)
    if (!('upload' in job.source)) throw new Error(`run ${run} has no uploaded configuration`)
    const config = await this.#runs.config(job.source.upload)
    if (config === undefined) throw new Error(`the configuration of run ${run} is gone`)
    return config
  }

  async state(run: string): Promise<Buffer | undefined> {
    const body = await this.#runs.state(this.#agent, run)
    return body === undefined ? undefined : Buffer.from(await collectBytes(body))
  }

  heartbeat(run: string): Promise<Directive> {
    return this.#runs.heartbeat(this.#agent, run)
  }

  log(run: string, sequence: number, text: string): Promise<void> {
    return this.#runs.appendLog(this.#agent, run, sequence, text)
  }

  planned(
    run: string,
    counts: PlanCounts,
    changes: boolean,
    logChunks: number,
  ): Promise<Directive> {
    return this.#runs.planned(this.#agent, run, counts, changes, logChunks)
  }

  async writeState(run: string, state: Buffer): Promise<void> {
    await this.#runs.writeState(this.#agent, run, bodyOf(state))
  }

  async finish(run: string, outcome: Outcome): Promise<void> {
    await this.#runs.finish(this.#agent, run, outcome)
  }
}
