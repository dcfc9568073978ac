import { hasEnded, type RunRecord } from '@cairn/runs'
import type { UnitId } from '@cairn/core'
import { timestamp, type Resource } from '../jsonapi/document'
import { workspaceId } from '../ids'

/**
 * A Cairn run as the TFE API's run, plan and apply (reference: runs-migration-encryption.md
 * section 3a). Terraform reads the run after a plan's log ends, so each status below is derived
 * from the one run record: the plan is `finished` in the same write that makes the run `planned`.
 */
export interface TfeRunState {
  run: string
  plan: 'pending' | 'running' | 'finished' | 'errored' | 'canceled'
  apply: 'pending' | 'running' | 'finished' | 'errored' | 'canceled' | 'unreachable'
  hasChanges: boolean
}

/** The TFE statuses of a run. */
export function tfeStateOf(record: RunRecord): TfeRunState {
  const over = hasEnded(record.status)
  const applying = record.apply_started !== null
  const planMade = record.plan !== null && (over || applying || record.phase === 'planned')
  const endStatus = record.status === 'failed' ? 'errored' : 'canceled'
  const plan: TfeRunState['plan'] = planMade
    ? 'finished'
    : over
      ? endStatus
      : record.status === 'queued'
        ? 'pending'
        : 'running'
  const apply: TfeRunState['apply'] = !applying
    ? over
      ? 'unreachable'
      : 'pending'
    : !over
      ? 'running'
      : record.status === 'succeeded'
        ? 'finished'
        : endStatus
  const hasChanges = record.changes ?? countOf(record) > 0
  return { run: runStatusOf(record, applying), plan, apply, hasChanges }
}

function countOf(record: RunRecord): number {
  const plan = record.plan
  return plan === null ? 0 : plan.add + plan.change + plan.destroy
}

function runStatusOf(record: RunRecord, applying: boolean): string {
  switch (record.status) {
    case 'queued':
      return 'pending'
    case 'running':
      if (record.phase === 'planned') return 'planned'
      if (applying) return 'applying'
      return 'planning'
    case 'succeeded':
      return applying ? 'applied' : 'planned_and_finished'
    case 'failed':
      return 'errored'
    case 'canceled':
      return record.discarded ? 'discarded' : 'canceled'
  }
}

export function planIdOf(run: string): string {
  return `plan-${run.slice('run-'.length)}`
}

export function applyIdOf(run: string): string {
  return `apply-${run.slice('run-'.length)}`
}

/** The run of a plan's or an apply's ID, or undefined for another kind of ID. */
export function runOfPart(id: string, part: 'plan' | 'apply'): string | undefined {
  const prefix = `${part}-`
  return id.startsWith(prefix) ? `run-${id.slice(prefix.length)}` : undefined
}

/** The run as `GET /runs/:id` answers it. */
export function runResource(record: RunRecord, state: TfeRunState): Resource {
  const unit = record.unit as UnitId
  const waiting = state.run === 'planned' && record.cancel === null
  const destroy = record.operation === 'destroy' || record.options.destroy === true
  return {
    id: record.id,
    type: 'runs',
    attributes: {
      status: state.run,
      'has-changes': state.hasChanges,
      'is-destroy': destroy,
      'plan-only': record.operation === 'plan',
      'auto-apply': record.auto_apply,
      'refresh-only': record.options.refresh_only === true,
      refresh: record.options.refresh !== false,
      'target-addrs': record.options.targets ?? null,
      'replace-addrs': record.options.replace ?? null,
      message: record.message ?? `Queued by ${record.principal.subject}`,
      source: 'tfe-api',
      'created-at': timestamp(record.created),
      'position-in-queue': 0,
      'status-timestamps': statusTimestamps(record, state),
      actions: {
        // As in HCP Terraform: a plan waiting for confirmation is discarded, not cancelled.
        'is-confirmable': waiting,
        'is-discardable': waiting,
        'is-cancelable':
          !hasEnded(record.status) && state.run !== 'planned' && record.cancel === null,
        'is-force-cancelable':
          !hasEnded(record.status) && record.cancel !== null && record.cancel.mode !== 'kill',
      },
      permissions: {
        'can-apply': true,
        'can-cancel': true,
        'can-discard': true,
        'can-force-cancel': true,
        'can-force-execute': false,
      },
    },
    relationships: {
      workspace: { data: { id: workspaceId(unit), type: 'workspaces' } },
      plan: { data: { id: planIdOf(record.id), type: 'plans' } },
      apply: { data: { id: applyIdOf(record.id), type: 'applies' } },
      'configuration-version':
        'upload' in record.source
          ? { data: { id: record.source.upload, type: 'configuration-versions' } }
          : { data: null },
      'cost-estimate': { data: null },
    },
    links: { self: `/tfe/api/v2/runs/${record.id}` },
  }
}

function statusTimestamps(record: RunRecord, state: TfeRunState): Record<string, string> {
  const stamps: Record<string, string> = { 'plan-queued-at': timestamp(record.created) }
  if (record.started !== null) stamps['planning-at'] = timestamp(record.started)
  if (record.apply_started !== null) stamps['applying-at'] = timestamp(record.apply_started)
  if (record.finished !== null)
    stamps[`${state.run.replaceAll('_', '-')}-at`] = timestamp(record.finished)
  return stamps
}

/** A run's plan: its status, its counts once made, and the signed URL of its log. */
export function planResource(record: RunRecord, state: TfeRunState, logUrl: string): Resource {
  const counts = record.plan
  return {
    id: planIdOf(record.id),
    type: 'plans',
    attributes: {
      status: state.plan,
      'has-changes': state.hasChanges,
      'resource-additions': counts?.add ?? 0,
      'resource-changes': counts?.change ?? 0,
      'resource-destructions': counts?.destroy ?? 0,
      'resource-imports': 0,
      'log-read-url': logUrl,
      'generated-configuration': false,
    },
    links: { self: `/tfe/api/v2/plans/${planIdOf(record.id)}` },
  }
}

/** A run's apply, present from the start (Terraform reads it before the apply begins). */
export function applyResource(record: RunRecord, state: TfeRunState, logUrl: string): Resource {
  const counts = state.apply === 'finished' ? record.plan : null
  return {
    id: applyIdOf(record.id),
    type: 'applies',
    attributes: {
      status: state.apply,
      'resource-additions': counts?.add ?? 0,
      'resource-changes': counts?.change ?? 0,
      'resource-destructions': counts?.destroy ?? 0,
      'resource-imports': 0,
      'log-read-url': logUrl,
    },
    links: { self: `/tfe/api/v2/applies/${applyIdOf(record.id)}` },
  }
}
