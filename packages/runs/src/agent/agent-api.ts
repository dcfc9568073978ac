import type { PlanCounts } from '../run-record'
import type { Directive, Job } from '../run-service'

/** How a run ended, as its agent reports it. */
export interface Outcome {
  status: 'succeeded' | 'failed' | 'canceled'
  error?: string
  stateDiverged?: boolean
}

/**
 * What an agent asks of the server, about the runs it holds: over HTTP for `cairn agent`
 * (`http-agent-api.ts`), or in the server's own process for `-runs-local-agent`.
 */
export interface AgentApi {
  /** The next run to do, waiting up to `waitMs` for one; undefined when none came. */
  claim(waitMs: number, signal: AbortSignal): Promise<Job | undefined>
  /** The `.tar.gz` of an uploaded configuration. */
  config(run: string): Promise<Buffer>
  /** The unit's current state, or undefined when it has none. */
  state(run: string): Promise<Buffer | undefined>
  heartbeat(run: string): Promise<Directive>
  /** Chunk `sequence` of the run's log; sending one twice stores it once. */
  log(run: string, sequence: number, text: string): Promise<void>
  /** The plan is made; its log is the first `logChunks` chunks. */
  planned(run: string, counts: PlanCounts, changes: boolean, logChunks: number): Promise<Directive>
  /** Writes the state Terraform left; rejects when the server refused it. */
  writeState(run: string, state: Buffer): Promise<void>
  finish(run: string, outcome: Outcome): Promise<void>
}
