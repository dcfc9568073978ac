import type { RUN_PHASES, RUN_STATUSES } from '@cairn/contract'
import { RUN_OPERATIONS, RunSchema, RunSourceSchema, type Run } from '@cairn/contract'
import { StoredPrincipalSchema } from '@cairn/core'
import * as v from 'valibot'

export const OPERATIONS = RUN_OPERATIONS
export type Operation = (typeof RUN_OPERATIONS)[number]
export type RunStatus = (typeof RUN_STATUSES)[number]
export type RunPhase = (typeof RUN_PHASES)[number]

/** Whether a run with this status has ended: nothing changes it again. */
export function hasEnded(status: RunStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'canceled'
}

/** Whether the operation writes the unit's state, and so holds its lock for the run's life. */
export function takesLock(operation: Operation): boolean {
  return operation !== 'plan'
}

const VariableSchema = v.object({
  value: v.string(),
  /** The value is HCL (a list, a map, a number), not a string. */
  hcl: v.boolean(),
  sensitive: v.boolean(),
})

const EnvSchema = v.object({ value: v.string(), sensitive: v.boolean() })

/** Plan options a run may carry beside its operation. */
export const RunOptionsSchema = v.object({
  /** A plan run plans the destruction of everything (`terraform plan -destroy`). */
  destroy: v.optional(v.boolean()),
  /** Resource addresses to plan alone (`-target`). */
  targets: v.optional(v.array(v.string())),
  /** Resource addresses to replace (`-replace`). */
  replace: v.optional(v.array(v.string())),
  /** false: plan without refreshing (`-refresh=false`). */
  refresh: v.optional(v.boolean()),
  /** Refresh only (`-refresh-only`): the state follows the real infrastructure, nothing changes. */
  refresh_only: v.optional(v.boolean()),
})
export type RunOptions = v.InferOutput<typeof RunOptionsSchema>

export const SourceSchema = RunSourceSchema
export type RunSource = v.InferOutput<typeof SourceSchema>

export type PlanCounts = NonNullable<Run['plan']>

/**
 * The stored run: `runs/records/<id>.json`. The fields the API shows are the contract's (`agent`
 * is the name of the agent token that claimed it); the rest are the run's own.
 */
export const RunRecordSchema = v.object({
  ...v.pick(RunSchema, [
    'id',
    'unit',
    'operation',
    'status',
    'phase',
    'created',
    'started',
    'finished',
    'agent',
    'source',
    'auto_apply',
    'plan',
    'error',
    'version',
    'state_diverged',
  ]).entries,
  variables: v.record(v.string(), VariableSchema),
  env: v.record(v.string(), EnvSchema),
  /** Milliseconds each phase may take before the run is ended as failed. */
  timeouts: v.object({ plan: v.number(), apply: v.number() }),
  /** Who submitted it. */
  principal: StoredPrincipalSchema,
  /** Why a queued run waits, as last found; null once it runs. */
  reason: v.nullable(v.string()),
  /** The lock ID it holds on its unit, from its claim to its end (apply and destroy only). */
  lock: v.nullable(v.string()),
  /** When its agent last said it was alive (epoch ms). */
  heartbeat: v.nullable(v.number()),
  /** When the current phase began (epoch ms), for its timeout. */
  phase_started: v.nullable(v.number()),
  /** A cancel asked for: `interrupt` first (SIGINT), `kill` when forced (SIGKILL). */
  cancel: v.nullable(v.object({ mode: v.picklist(['interrupt', 'kill']), by: v.string() })),
  /** Who confirmed a planned apply. */
  confirmed_by: v.nullable(v.string()),
  /** Terraform's plan options beyond the operation (the `cloud` block's `-target`, `-replace`,
   * `-refresh=false` and `-refresh-only`); runs written before them had none. */
  options: v.optional(RunOptionsSchema, {}),
  /** The number of log chunks the plan wrote: the apply's log begins at this chunk. Null until
   * the plan is made. */
  plan_log_chunks: v.optional(v.nullable(v.number()), null),
  /** Whether the plan found anything to change (resources or outputs); null until it is made. */
  changes: v.optional(v.nullable(v.boolean()), null),
  /** When the apply began (confirmed, or at once with `auto_apply`); null if it never did. */
  apply_started: v.optional(v.nullable(v.string()), null),
  /** Ended by a discard of its plan (declined at the prompt), not by a cancel. */
  discarded: v.optional(v.boolean(), false),
  /** The message the `cloud` block gave its run; null for runs of `/v1`. */
  message: v.optional(v.nullable(v.string()), null),
})
export type RunRecord = v.InferOutput<typeof RunRecordSchema>

/** A run as `/v1/runs` answers it: never a variable's or an env value's content. */
export type RunView = Run

/** The view of a run, with its place in its unit's queue when it waits. */
export function viewOf(record: RunRecord, position: number | undefined): RunView {
  return {
    id: record.id,
    unit: record.unit,
    operation: record.operation,
    status: record.status,
    phase: record.phase,
    created: record.created,
    started: record.started,
    finished: record.finished,
    agent: record.agent,
    source: record.source,
    variables: Object.keys(record.variables),
    env: Object.keys(record.env),
    auto_apply: record.auto_apply,
    created_by: record.principal.subject,
    queue:
      record.status === 'queued'
        ? { position: position ?? 0, reason: record.reason ?? 'waiting for an agent' }
        : null,
    plan: record.plan,
    error: record.error,
    cancel_requested: record.cancel !== null,
    version: record.version,
    state_diverged: record.state_diverged,
  }
}

/** Every value a run must never show: its sensitive variables and env values. */
export function secretsOf(record: RunRecord): string[] {
  const secrets = [
    ...Object.values(record.variables).filter((variable) => variable.sensitive),
    ...Object.values(record.env).filter((env) => env.sensitive),
  ].map(({ value }) => value)
  return secrets.filter((secret) => secret !== '')
}
