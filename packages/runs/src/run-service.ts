import { createHash } from 'node:crypto'
import {
  demand,
  InvalidRequestError,
  iso,
  LockConflictError,
  parseUnitId,
  RunConflictError,
  RunNotFoundError,
  StateNotFoundError,
  toStoredPrincipal,
  UnitFrozenError,
  UnitNotFoundError,
  type Core,
  type Clock,
  type IdSource,
  type ObjectStore,
  type Principal,
  type UnitId,
} from '@cairn/core'
import type { AgentIdentity } from './agent-tokens'
import { RunLogs } from './run-logs'
import {
  hasEnded,
  secretsOf,
  takesLock,
  viewOf,
  type PlanCounts,
  type RunOptions,
  type RunRecord,
  type RunStatus,
  type RunView,
} from './run-record'
import { parseSubmission, type Submission } from './run-submission'
import { RunWorkspaces } from './run-workspaces'
import { isRunId, newRunId, RunStore, type StoredRun } from './run-store'

/** The default bound of an uploaded configuration: 10 MiB compressed (DESIGN section 14). */
export const DEFAULT_MAX_CONFIG_BYTES = 10 * 1024 * 1024
/** An agent silent for this long has stopped: its run ends as failed and its lock is released. */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 60_000
/** How often a waiting agent's claim looks at the queue again. */
const CLAIM_POLL_MS = 1_000
/** How often an instance sweeps the uploads no run took. */
const SWEEP_EVERY_MS = 60 * 60_000
/** The issuer of every run's principal: no login or token has it. */
export const RUN_ISSUER = 'cairn:runs'

/** What an agent is told to do with a run it holds, at each heartbeat. */
export interface Directive {
  /** `interrupt`: stop Terraform gently (SIGINT); `kill`: at once (SIGKILL). */
  cancel: 'none' | 'interrupt' | 'kill'
  /** A planned apply was confirmed: apply it. */
  apply: boolean
  /** The run has ended on the server (cancelled while queued for confirmation, timed out). */
  ended: boolean
}

/** A run as its agent gets it: the values of its variables and env too. */
export interface Job {
  id: string
  /** The agent that holds it, by its token's name. */
  agent: string
  unit: string
  operation: RunRecord['operation']
  auto_apply: boolean
  source: RunRecord['source']
  variables: Record<string, { value: string; hcl: boolean }>
  env: Record<string, string>
  /** Values the agent must never send in a log chunk. */
  secrets: string[]
  timeouts: RunRecord['timeouts']
  /** Plan options beside the operation; absent from a server that had none. */
  options?: RunOptions
}

/** Something that happened to a run, for metrics, webhooks and the log. */
export interface RunEvent {
  type: 'run.created' | 'run.planned' | 'run.completed' | 'run.canceled'
  run: RunView
}

export interface RunServiceOptions {
  core: Core
  store: ObjectStore
  clock: Clock
  ids: IdSource
  /** Largest configuration upload, in bytes. */
  maxConfigBytes?: number
  heartbeatTimeoutMs?: number
  /** URL prefixes a git source may name; none by default, so git sources are refused. */
  gitAllowed?: readonly string[]
  /** Hears of every event; its failures are its own. */
  onEvent?: (event: RunEvent) => void
}

/**
 * Remote runs (DESIGN section 14): submitted through `/v1/runs`, queued one at a time per unit,
 * first in first out, claimed by agents, and ended on every path with the unit's lock released.
 * Records, markers and logs live in the store, so every instance over it serves every run.
 */
export class RunService {
  readonly runs: RunStore
  readonly logs: RunLogs
  /** Execution modes and the `cloud` block's configuration versions. */
  readonly workspaces: RunWorkspaces
  readonly #core: Core
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #maxConfigBytes: number
  readonly #heartbeatTimeoutMs: number
  readonly #gitAllowed: readonly string[]
  readonly #onEvent: (event: RunEvent) => void
  /** The time in the last run ID made here, which the next one passes. */
  #lastId = 0
  /** When this instance last swept unused uploads. */
  #lastSweep = 0

  constructor(options: RunServiceOptions) {
    this.#core = options.core
    this.#clock = options.clock
    this.#ids = options.ids
    this.#maxConfigBytes = options.maxConfigBytes ?? DEFAULT_MAX_CONFIG_BYTES
    this.#heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? DEFAULT_HEARTBEAT_TIMEOUT_MS
    this.#gitAllowed = options.gitAllowed ?? []
    this.#onEvent = options.onEvent ?? (() => undefined)
    this.runs = new RunStore(options.store)
    this.logs = new RunLogs(options.store)
    this.workspaces = new RunWorkspaces({
      core: options.core,
      store: options.store,
      clock: options.clock,
      ids: options.ids,
      maxConfigBytes: this.#maxConfigBytes,
    })
  }

  get maxConfigBytes(): number {
    return this.#maxConfigBytes
  }

  /**
   * Keeps an uploaded configuration, once it has passed the archive's checks; answers its ID.
   *
   * @throws ArchiveError, InvalidRequestError (400)
   */
  uploadConfig(gzipped: Uint8Array): Promise<{ id: string }> {
    return this.workspaces.upload(gzipped)
  }

  /** The bytes of an uploaded configuration, or undefined. */
  config(upload: string): Promise<Buffer | undefined> {
    return this.workspaces.config(upload)
  }

  /**
   * Queues a run. An apply or destroy needs `unit:write` on its unit, a plan `unit:read`.
   *
   * @throws InvalidRequestError, ForbiddenError
   */
  async submit(principal: Principal, body: unknown): Promise<RunView> {
    return (await this.queue(principal, parseSubmission(body, this.#gitAllowed))).view
  }

  /**
   * Queues a run already checked (the `cloud` block's runs come this way); answers its record
   * too, for the views of other surfaces.
   *
   * @throws InvalidRequestError, ForbiddenError
   */
  async queue(
    principal: Principal,
    submission: Submission,
  ): Promise<{ view: RunView; record: RunRecord }> {
    const unit = submission.unit
    await demand(
      this.#core.authorizer,
      principal,
      takesLock(submission.operation) ? 'unit:write' : 'unit:read',
      unit,
    )
    if ('upload' in submission.source) {
      if (!(await this.workspaces.uploaded(submission.source.upload))) {
        throw new InvalidRequestError(
          `source.upload: no configuration ${submission.source.upload}; upload one to /v1/runs/uploads first`,
        )
      }
    }
    const now = this.#clock.now()
    // IDs order the queue: two runs made in one millisecond here still take the order they came in.
    this.#lastId = Math.max(now, this.#lastId + 1)
    const record: RunRecord = {
      id: newRunId(this.#lastId, this.#ids.token()),
      unit,
      operation: submission.operation,
      status: 'queued',
      phase: 'queued',
      created: iso(now),
      started: null,
      finished: null,
      agent: null,
      source: submission.source,
      variables: submission.variables,
      env: submission.env,
      timeouts: submission.timeouts,
      auto_apply: submission.autoApply,
      principal: toStoredPrincipal(principal),
      reason: null,
      plan: null,
      error: null,
      lock: null,
      heartbeat: null,
      phase_started: null,
      cancel: null,
      confirmed_by: null,
      version: null,
      state_diverged: false,
      options: submission.options ?? {},
      plan_log_chunks: null,
      changes: null,
      apply_started: null,
      discarded: false,
      message: submission.message ?? null,
    }
    await this.runs.create(record, this.#lastId)
    const view = await this.#view(record)
    this.#emit('run.created', view)
    return { view, record }
  }

  /**
   * A run's record, for another surface's view of it (the `cloud` block's); a run of a unit the
   * caller may not read is not found.
   *
   * @throws RunNotFoundError
   */
  async record(principal: Principal, id: string): Promise<RunRecord> {
    return (await this.#readable(principal, id)).record
  }

  /** @throws RunNotFoundError (also for a run of a unit the caller may not read) */
  async get(principal: Principal, id: string): Promise<RunView> {
    const { record } = await this.#readable(principal, id)
    return this.#view(record)
  }

  /**
   * Runs newest first, of one unit or of every unit the caller may read, with a status when asked.
   *
   * @throws InvalidRequestError
   */
  async list(
    principal: Principal,
    options: { unit?: string; status?: string; limit?: number; cursor?: string },
  ): Promise<{ runs: RunView[]; next_cursor: string | null }> {
    const limit = options.limit ?? 20
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      throw new InvalidRequestError('limit must be a whole number from 1 to 100')
    }
    const status = options.status
    if (
      status !== undefined &&
      !['queued', 'running', 'succeeded', 'failed', 'canceled'].includes(status)
    ) {
      throw new InvalidRequestError('status must be queued, running, succeeded, failed or canceled')
    }
    const unit = options.unit === undefined ? undefined : parseUnitId(options.unit)
    if (unit !== undefined) await demand(this.#core.authorizer, principal, 'unit:read', unit)
    if (options.cursor !== undefined && !/^[0-9a-z]{9}_run-[0-9a-z]{25}$/.test(options.cursor)) {
      throw new InvalidRequestError('cursor: not a cursor of this listing')
    }
    const runs: RunView[] = []
    let after = options.cursor
    // Pages are read until `limit` runs match or the listing ends: a filter may skip many.
    for (let pages = 0; pages < 50; pages += 1) {
      const page = await this.runs.page({
        ...(unit === undefined ? {} : { unit }),
        ...(after === undefined ? {} : { after }),
        limit: limit - runs.length,
      })
      for (const id of page.ids) {
        const stored = await this.runs.read(id)
        if (stored === undefined) continue
        const { record } = stored
        if (status !== undefined && record.status !== status) continue
        if (!(await this.#core.authorizer.can(principal, 'unit:read', record.unit as UnitId))) {
          continue
        }
        runs.push(await this.#view(record))
      }
      after = page.last
      if (!page.more || runs.length >= limit) {
        return { runs, next_cursor: page.more ? (after ?? null) : null }
      }
    }
    return { runs, next_cursor: after ?? null }
  }

  /**
   * Cancels a run: a queued one ends at once; a running one is interrupted (its agent sends
   * Terraform SIGINT, and the run ends when Terraform does); `force` kills it (SIGKILL).
   *
   * @throws RunNotFoundError, RunConflictError (ended, or a cancel already asked and no force)
   */
  async cancel(
    principal: Principal,
    id: string,
    options: { force?: boolean } = {},
  ): Promise<RunView> {
    const { record: before } = await this.#readable(principal, id)
    await demand(this.#core.authorizer, principal, 'unit:write', before.unit as UnitId)
    const force = options.force === true
    const now = this.#clock.now()
    const after = await this.runs.update(id, (record) => {
      if (hasEnded(record.status)) {
        throw new RunConflictError(
          `run ${id} has ended (${record.status}): there is nothing to cancel`,
          record.status,
        )
      }
      if (record.status === 'queued') {
        return {
          ...ended(record, 'canceled', now),
          error: `canceled by ${principal.subject} while queued`,
        }
      }
      if (record.cancel !== null && (!force || record.cancel.mode === 'kill')) {
        throw new RunConflictError(
          record.cancel.mode === 'kill'
            ? `run ${id} is being killed already`
            : `run ${id} is being canceled already; add force to kill Terraform at once`,
          record.status,
        )
      }
      return { ...record, cancel: { mode: force ? 'kill' : 'interrupt', by: principal.subject } }
    })
    if (hasEnded(after.status)) await this.#afterEnd(after, true)
    return this.#view(after)
  }

  /**
   * Confirms a planned apply that waits for it.
   *
   * @throws RunNotFoundError, RunConflictError
   */
  async confirm(principal: Principal, id: string): Promise<RunView> {
    const { record: before } = await this.#readable(principal, id)
    await demand(this.#core.authorizer, principal, 'unit:write', before.unit as UnitId)
    const now = this.#clock.now()
    const after = await this.runs.update(id, (record) => {
      if (record.operation === 'plan') {
        throw new RunConflictError(`run ${id} is a plan: it has nothing to apply`, record.status)
      }
      if (record.status !== 'running' || record.phase !== 'planned' || record.cancel !== null) {
        throw new RunConflictError(
          `run ${id} is not waiting for confirmation (it is ${record.status}, ${record.phase})`,
          record.status,
        )
      }
      return {
        ...record,
        phase: 'applying',
        phase_started: now,
        confirmed_by: principal.subject,
        apply_started: iso(now),
      }
    })
    return this.#view(after)
  }

  /**
   * Discards a planned apply that waits for confirmation (declined at Terraform's prompt): the
   * run ends canceled, its plan never applied, its lock released.
   *
   * @throws RunNotFoundError, RunConflictError
   */
  async discard(principal: Principal, id: string): Promise<RunView> {
    const { record: before } = await this.#readable(principal, id)
    await demand(this.#core.authorizer, principal, 'unit:write', before.unit as UnitId)
    const after = await this.runs.update(id, (record) => {
      if (record.status !== 'running' || record.phase !== 'planned' || record.cancel !== null) {
        throw new RunConflictError(
          `run ${id} is not waiting for confirmation (it is ${record.status}, ${record.phase}): there is nothing to discard`,
          record.status,
        )
      }
      return {
        ...record,
        cancel: { mode: 'interrupt', by: principal.subject },
        discarded: true,
      }
    })
    return this.#view(after)
  }

  /** The log from `offset`, and whether the run has ended (then nothing more comes). */
  async readLog(
    principal: Principal,
    id: string,
    offset: number,
  ): Promise<{ bytes: Buffer; next: number; ended: boolean }> {
    const { record } = await this.#readable(principal, id)
    const read = await this.logs.read(id, offset)
    return { ...read, ended: hasEnded(record.status) }
  }

  /**
   * One part of a run's log, as the `cloud` block reads it, from `offset` within the part: the
   * plan's (every chunk until the apply begins, then the chunks the plan wrote) or the apply's
   * (the chunks after), and whether the part is whole: nothing more comes to it. The caller has
   * checked the right to read the run (a signed URL).
   *
   * @throws RunNotFoundError
   */
  async readLogPart(
    id: string,
    part: 'plan' | 'apply',
    offset: number,
  ): Promise<{ bytes: Buffer; done: boolean; record: RunRecord }> {
    if (!isRunId(id)) throw new RunNotFoundError(id)
    const { record } = await this.runs.get(id)
    const over = hasEnded(record.status)
    const split = record.apply_started === null ? null : record.plan_log_chunks
    if (part === 'plan') {
      const { bytes } = await this.logs.read(id, offset, { to: split ?? undefined })
      const done = over || record.phase === 'planned' || record.apply_started !== null
      return { bytes, done, record }
    }
    if (record.apply_started === null) return { bytes: Buffer.alloc(0), done: over, record }
    const { bytes } = await this.logs.read(id, offset, { from: split ?? undefined })
    return { bytes, done: over, record }
  }

  // The agents' side. Each call names the run it holds; a run another agent holds is not found.

  /**
   * The oldest queued run that may start, claimed for `agent`: the first run of each unit only,
   * and for an apply or destroy only once the unit's lock is taken for it. Answers undefined when
   * none may start.
   */
  async claim(agent: AgentIdentity): Promise<Job | undefined> {
    const units = new Set<string>()
    for (const id of await this.runs.active()) {
      const stored = await this.runs.read(id)
      if (stored === undefined || hasEnded(stored.record.status)) {
        if (stored !== undefined) await this.#afterEnd(stored.record, false)
        else await this.runs.dequeue(id)
        continue
      }
      const { record } = stored
      if (units.has(record.unit)) continue
      units.add(record.unit)
      if (record.status !== 'queued' || record.cancel !== null) continue
      const job = await this.#tryStart(stored, agent)
      if (job !== undefined) return job
    }
    return undefined
  }

  /**
   * `claim`, asked again every `CLAIM_POLL_MS` until a run comes, `waitMs` pass or `signal`
   * aborts: an agent's long poll.
   */
  async claimWithin(
    agent: AgentIdentity,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<Job | undefined> {
    const deadline = performance.now() + waitMs
    for (;;) {
      const job = await this.claim(agent)
      if (job !== undefined) return job
      const left = deadline - performance.now()
      if (left <= 0 || signal?.aborted === true) return undefined
      await new Promise<void>((done) => {
        const timer = setTimeout(done, Math.min(CLAIM_POLL_MS, left))
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            done()
          },
          { once: true },
        )
      })
    }
  }

  async #tryStart(stored: StoredRun, agent: AgentIdentity): Promise<Job | undefined> {
    const { record, etag } = stored
    const now = this.#clock.now()
    const lock = takesLock(record.operation) ? lockIdOf(record.id) : null
    if (lock !== null) {
      const waiting = await this.#takeLock(record, lock)
      if (waiting !== undefined) {
        if (record.reason !== waiting) {
          await this.runs.replace({ ...record, phase: 'waiting_for_lock', reason: waiting }, etag)
        }
        return undefined
      }
    }
    const started: RunRecord = {
      ...record,
      status: 'running',
      phase: 'planning',
      started: iso(now),
      agent: agent.name,
      reason: null,
      lock,
      heartbeat: now,
      phase_started: now,
    }
    if (!(await this.runs.replace(started, etag))) {
      // Cancelled, or claimed by another agent, meanwhile: a cancelled run gives its lock back.
      const fresh = await this.runs.read(record.id)
      if (fresh === undefined || hasEnded(fresh.record.status)) await this.#releaseLock(record)
      return undefined
    }
    return jobOf(started)
  }

  /** Takes the unit's lock for the run; answers why it must wait, or undefined once it holds it. */
  async #takeLock(record: RunRecord, lockId: string): Promise<string | undefined> {
    try {
      await this.#core.locks.lock(
        runPrincipal(record),
        record.unit as UnitId,
        {
          ID: lockId,
          Who: `run:${record.id}`,
          Operation: 'OperationTypeApply',
          Info: `Cairn run ${record.id} (${record.operation})`,
        },
        { source: 'run', create: true },
      )
      return undefined
    } catch (error) {
      if (error instanceof LockConflictError) {
        const who = error.lock?.Who ?? 'someone'
        return `the unit is locked by ${who === '' ? 'someone' : who}${error.lock === null ? '' : ` (lock ${error.lock.ID})`}`
      }
      if (error instanceof UnitFrozenError) return `the unit is frozen: ${error.message}`
      throw error
    }
  }

  /** The run an agent holds, checked. @throws RunNotFoundError */
  async #held(agent: AgentIdentity, id: string): Promise<StoredRun> {
    const stored = await this.runs.read(id)
    if (stored?.record.agent !== agent.name || stored.record.status === 'queued') {
      throw new RunNotFoundError(id)
    }
    return stored
  }

  /** The job of a run the agent holds, as its claim gave it. */
  async job(agent: AgentIdentity, id: string): Promise<Job> {
    return jobOf((await this.#held(agent, id)).record)
  }

  /** What the agent is to do next; also its proof of life. */
  async heartbeat(agent: AgentIdentity, id: string): Promise<Directive> {
    if (!isRunId(id)) throw new RunNotFoundError(id)
    const now = this.#clock.now()
    // One read: the check that the agent holds the run is made on the record being changed.
    const record = await this.runs.update(id, (current) => {
      if (current.agent !== agent.name || current.status === 'queued') {
        throw new RunNotFoundError(id)
      }
      return hasEnded(current.status) ? undefined : { ...current, heartbeat: now }
    })
    return directiveOf(record)
  }

  /** Stores one chunk of a run's log, scrubbed. */
  async appendLog(agent: AgentIdentity, id: string, sequence: number, text: string): Promise<void> {
    const { record } = await this.#held(agent, id)
    if (!Number.isSafeInteger(sequence) || sequence < 0) {
      throw new InvalidRequestError('sequence must be a whole number from 0')
    }
    await this.logs.append(id, sequence, text, secretsOf(record))
  }

  /**
   * The plan is made: a plan run or a plan with no changes ends; an apply goes on at once with
   * `auto_apply`, or waits for confirmation.
   */
  async planned(
    agent: AgentIdentity,
    id: string,
    counts: PlanCounts,
    changes: boolean,
    logChunks?: number,
  ): Promise<Directive> {
    await this.#held(agent, id)
    const now = this.#clock.now()
    const record = await this.runs.update(id, (current) => {
      if (hasEnded(current.status) || current.phase !== 'planning') return undefined
      const next = {
        ...current,
        plan: counts,
        heartbeat: now,
        phase_started: now,
        plan_log_chunks: logChunks ?? null,
        changes,
      }
      if (current.operation === 'plan' || !changes) return next
      return current.auto_apply
        ? { ...next, phase: 'applying' as const, apply_started: iso(now) }
        : { ...next, phase: 'planned' as const }
    })
    this.#emit('run.planned', await this.#view(record))
    return directiveOf(record)
  }

  /** The unit's current state for the run, or undefined when it has none. */
  async state(agent: AgentIdentity, id: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const { record } = await this.#held(agent, id)
    try {
      const download = await this.#core.versions.download(
        runPrincipal(record),
        record.unit as UnitId,
      )
      return download.body
    } catch (error) {
      if (error instanceof StateNotFoundError || error instanceof UnitNotFoundError)
        return undefined
      throw error
    }
  }

  /**
   * Writes the state the run's Terraform left, through the one write path, under the run's lock.
   * A write that fails marks the run `state_diverged` before the error goes back.
   */
  async writeState(
    agent: AgentIdentity,
    id: string,
    body: AsyncIterable<Uint8Array>,
  ): Promise<string> {
    const { record } = await this.#held(agent, id)
    if (record.lock === null || hasEnded(record.status)) {
      throw new RunConflictError(
        `run ${id} holds no lock on ${record.unit}: it writes no state`,
        record.status,
      )
    }
    await this.runs.update(id, (current) =>
      hasEnded(current.status) ? undefined : { ...current, phase: 'uploading_state' },
    )
    try {
      const version = await this.#core.states.write(
        runPrincipal(record),
        record.unit as UnitId,
        body,
        {
          source: 'run',
          lockId: record.lock,
          create: true,
        },
      )
      await this.runs.update(id, (current) => ({ ...current, version: version.timestamp }))
      return version.timestamp
    } catch (error) {
      await this.runs.update(id, (current) => ({ ...current, state_diverged: true }))
      throw error
    }
  }

  /** The agent's last word: how the run ended. The lock is released first, then the run ends. */
  async finish(
    agent: AgentIdentity,
    id: string,
    outcome: {
      status: 'succeeded' | 'failed' | 'canceled'
      error?: string
      stateDiverged?: boolean
    },
  ): Promise<RunView> {
    const { record: held } = await this.#held(agent, id)
    await this.#releaseLock(held)
    const now = this.#clock.now()
    let endedHere = false
    const record = await this.runs.update(id, (current) => {
      if (hasEnded(current.status)) return undefined
      endedHere = true
      const timedOut = current.cancel?.by === 'timeout'
      const status: RunStatus = timedOut ? 'failed' : outcome.status
      const error = timedOut
        ? `the ${current.phase === 'planning' ? 'plan' : 'apply'} took longer than its timeout`
        : (outcome.error ??
          (status === 'canceled' && current.cancel !== null
            ? `${current.discarded ? 'discarded' : 'canceled'} by ${current.cancel.by}`
            : null))
      return {
        ...ended(current, status, now),
        error: error === null ? null : error.slice(0, 2000),
        state_diverged: current.state_diverged || outcome.stateDiverged === true,
      }
    })
    await this.#afterEnd(record, endedHere)
    return this.#view(record)
  }

  /**
   * Ends what no agent will: runs whose agent went silent past the heartbeat timeout (failed,
   * lock released), and asks for the cancel of runs past their phase's timeout. Safe on every
   * instance at once: each change is a conditional write.
   */
  async reconcile(): Promise<void> {
    const now = this.#clock.now()
    const inUse = new Set<string>()
    for (const id of await this.runs.active()) {
      const stored = await this.runs.read(id)
      if (stored === undefined) {
        await this.runs.dequeue(id)
        continue
      }
      const { record } = stored
      if ('upload' in record.source) inUse.add(record.source.upload)
      if (hasEnded(record.status)) {
        await this.#afterEnd(record, false)
        continue
      }
      if (record.status !== 'running') continue
      if (now - (record.heartbeat ?? 0) > this.#heartbeatTimeoutMs) {
        await this.#releaseLock(record)
        const after = await this.runs.update(id, (current) =>
          current.status !== 'running' || now - (current.heartbeat ?? 0) <= this.#heartbeatTimeoutMs
            ? undefined
            : {
                ...ended(current, 'failed', now),
                error: `agent ${current.agent ?? ''} stopped reporting: no heartbeat for ${Math.round((now - (current.heartbeat ?? 0)) / 1000)} s`,
              },
        )
        if (hasEnded(after.status)) await this.#afterEnd(after, true)
        continue
      }
      const limit = record.phase === 'planning' ? record.timeouts.plan : record.timeouts.apply
      if (record.cancel === null && now - (record.phase_started ?? now) > limit) {
        await this.runs.update(id, (current) =>
          current.status === 'running' && current.cancel === null
            ? { ...current, cancel: { mode: 'interrupt', by: 'timeout' } }
            : undefined,
        )
      }
    }
    if (now - this.#lastSweep >= SWEEP_EVERY_MS) {
      this.#lastSweep = now
      await this.workspaces.sweep(inUse)
    }
  }

  /**
   * What follows a run's end, again until done (a crash between the steps leaves the run in the
   * queue, where the next claim or reconcile finds it): its lock back, out of the queue; its event
   * once, by whoever ended it.
   */
  async #afterEnd(record: RunRecord, announce: boolean): Promise<void> {
    await this.#releaseLock(record)
    await this.runs.dequeue(record.id)
    if (announce) {
      this.#emit(
        record.status === 'canceled' ? 'run.canceled' : 'run.completed',
        viewOf(record, undefined),
      )
    }
  }

  /** Releases the run's lock if it holds it; a lock someone else holds stays. */
  async #releaseLock(record: RunRecord): Promise<void> {
    if (!takesLock(record.operation)) return
    try {
      await this.#core.locks.unlock(runPrincipal(record), record.unit as UnitId, {
        lockId: lockIdOf(record.id),
        source: 'run',
      })
    } catch (error) {
      if (error instanceof LockConflictError || error instanceof UnitNotFoundError) return
      throw error
    }
  }

  async #readable(principal: Principal, id: string): Promise<StoredRun> {
    if (!isRunId(id)) throw new RunNotFoundError(id)
    const stored = await this.runs.get(id)
    if (!(await this.#core.authorizer.can(principal, 'unit:read', stored.record.unit as UnitId))) {
      throw new RunNotFoundError(id)
    }
    return stored
  }

  /** The view, with the run's place in its unit's queue when it waits. */
  async #view(record: RunRecord): Promise<RunView> {
    if (record.status !== 'queued') return viewOf(record, undefined)
    let position = 1
    let ahead: string | undefined
    for (const id of await this.runs.active()) {
      if (id >= record.id) break
      const other = await this.runs.read(id)
      if (other?.record.unit !== record.unit || hasEnded(other.record.status)) {
        continue
      }
      position += 1
      ahead ??= id
    }
    const view = viewOf(record, position)
    if (ahead !== undefined && view.queue !== null) {
      view.queue.reason = `waiting for run ${ahead} of the same unit to end`
    }
    return view
  }

  #emit(type: RunEvent['type'], run: RunView): void {
    try {
      this.#onEvent({ type, run })
    } catch {
      // A listener's failure is its own.
    }
  }
}

/** The principal a run acts as: its own, writing its unit only. */
export function runPrincipal(record: RunRecord): Principal {
  return {
    subject: `run:${record.id}`,
    issuer: RUN_ISSUER,
    groups: [],
    roles: ['admin'],
    limit: { scope: record.unit, role: 'writer' },
  }
}

/** The lock ID a run holds: derived from its ID, so a claim retried on any instance takes it again. */
function lockIdOf(id: string): string {
  const hex = createHash('sha256').update(`run-lock:${id}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

function ended(record: RunRecord, status: RunStatus, now: number): RunRecord {
  return { ...record, status, phase: 'finished', finished: iso(now), heartbeat: null }
}

function directiveOf(record: RunRecord): Directive {
  return {
    cancel: record.cancel === null ? 'none' : record.cancel.mode,
    apply: record.status === 'running' && record.phase === 'applying',
    ended: hasEnded(record.status),
  }
}

function jobOf(record: RunRecord): Job {
  return {
    id: record.id,
    agent: record.agent ?? '',
    unit: record.unit,
    operation: record.operation,
    auto_apply: record.auto_apply,
    source: record.source,
    variables: Object.fromEntries(
      Object.entries(record.variables).map(([name, { value, hcl }]) => [name, { value, hcl }]),
    ),
    env: Object.fromEntries(Object.entries(record.env).map(([name, { value }]) => [name, value])),
    secrets: secretsOf(record),
    timeouts: record.timeouts,
    options: record.options,
  }
}
