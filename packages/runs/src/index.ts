/**
 * `@cairn/runs`: remote runs (DESIGN section 14). Runs queued per unit in the store and claimed
 * by agents, each apply holding its unit's one lock from its claim to its end; agent tokens; the
 * checked configuration archive; the agent itself (`Agent`), which the CLI's `cairn agent` and the
 * server's `-runs-local-agent` both run.
 *
 * @module
 */
export type { AgentIdentity, AgentTokenView } from './agent-tokens'
export { AGENT_TOKEN_PREFIX, AgentTokens } from './agent-tokens'
export type { ArchiveEntry } from './config-archive'
export { ArchiveError, packDirectory, readArchive, unpack } from './config-archive'
export { MAX_CHUNK_BYTES, scrub } from './run-logs'
export type {
  Operation,
  PlanCounts,
  RunOptions,
  RunPhase,
  RunRecord,
  RunStatus,
  RunView,
} from './run-record'
export { hasEnded } from './run-record'
export type { Submission } from './run-submission'
export type { ConfigVersion, ExecutionMode } from './run-workspaces'
export { EXECUTION_MODES, RunWorkspaces, runSettingsExtension } from './run-workspaces'
export type { Directive, Job, RunEvent, RunServiceOptions } from './run-service'
export {
  DEFAULT_HEARTBEAT_TIMEOUT_MS,
  DEFAULT_MAX_CONFIG_BYTES,
  RUN_ISSUER,
  RunService,
  runPrincipal,
} from './run-service'
export { DEFAULT_TIMEOUTS } from './run-submission'
export type { AgentApi, Outcome } from './agent/agent-api'
export type { AgentOptions } from './agent/agent'
export { Agent } from './agent/agent'
export { AgentApiError, HttpAgentApi } from './agent/http-agent-api'
export { LocalAgentApi } from './agent/local-agent-api'
export { DEFAULT_CANCEL_GRACE_MS, HEARTBEAT_MS } from './agent/run-executor'
