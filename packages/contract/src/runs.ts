import * as v from 'valibot'

/** What a run does (DESIGN section 14). */
export const RUN_OPERATIONS = ['plan', 'apply', 'destroy'] as const
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const
export const RUN_PHASES = [
  'queued',
  'waiting_for_lock',
  'planning',
  'planned',
  'applying',
  'uploading_state',
  'finished',
] as const

const CountsSchema = v.object({ add: v.number(), change: v.number(), destroy: v.number() })

/** Where a run's configuration comes from: an upload, or a git repository the server allows. */
export const RunSourceSchema = v.union([
  v.object({ upload: v.string() }),
  v.object({
    git: v.object({ url: v.string(), ref: v.string(), path: v.optional(v.string()) }),
  }),
])

/** A run as `/v1/runs` answers it: the names of its variables and env, never their values. */
export const RunSchema = v.object({
  id: v.string(),
  unit: v.string(),
  operation: v.picklist(RUN_OPERATIONS),
  status: v.picklist(RUN_STATUSES),
  phase: v.picklist(RUN_PHASES),
  created: v.string(),
  started: v.nullable(v.string()),
  finished: v.nullable(v.string()),
  agent: v.nullable(v.string()),
  source: RunSourceSchema,
  variables: v.array(v.string()),
  env: v.array(v.string()),
  auto_apply: v.boolean(),
  created_by: v.string(),
  queue: v.nullable(v.object({ position: v.number(), reason: v.string() })),
  plan: v.nullable(CountsSchema),
  error: v.nullable(v.string()),
  cancel_requested: v.boolean(),
  version: v.nullable(v.string()),
  state_diverged: v.boolean(),
})
export type Run = v.InferOutput<typeof RunSchema>

export const RunListSchema = v.object({
  runs: v.array(RunSchema),
  next_cursor: v.nullable(v.string()),
})
export type RunList = v.InferOutput<typeof RunListSchema>

/** `POST /v1/runs`. `timeouts` are in seconds. */
export interface RunRequest {
  unit: string
  operation: (typeof RUN_OPERATIONS)[number]
  source: { upload: string } | { git: { url: string; ref: string; path?: string } }
  variables?: Record<string, { value: string; hcl?: boolean; sensitive?: boolean }>
  env?: Record<string, { value: string; sensitive?: boolean }>
  timeouts?: { plan?: number; apply?: number }
  auto_apply?: boolean
}

export const ConfigUploadSchema = v.object({ id: v.string() })

/** Where the `cloud` block's runs of a unit happen: `local` (the default) or on agents. */
export const EXECUTION_MODES = ['local', 'remote', 'agent'] as const
/** `GET` and `PUT /v1/runs/settings?unit=`: a unit's run settings. */
export const RunSettingsSchema = v.object({
  unit: v.string(),
  execution_mode: v.picklist(EXECUTION_MODES),
})
export type RunSettings = v.InferOutput<typeof RunSettingsSchema>

export const AgentTokenSchema = v.object({
  id: v.string(),
  name: v.string(),
  created: v.string(),
  created_by: v.string(),
})
export type AgentToken = v.InferOutput<typeof AgentTokenSchema>
export const CreatedAgentTokenSchema = v.object({ ...AgentTokenSchema.entries, token: v.string() })
export type CreatedAgentToken = v.InferOutput<typeof CreatedAgentTokenSchema>
export const AgentTokenListSchema = v.object({ tokens: v.array(AgentTokenSchema) })
