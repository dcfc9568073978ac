import {
  AUDIT_ACTIONS,
  AUDIT_OUTCOMES,
  AUDIT_SURFACES,
  MAX_AUDIT_PAGE,
  type AuditRecord,
} from '@cairn/sdk'
import { defineCommand } from 'citty'
import { UsageError } from '../cli-error'
import { openContext } from '../context'
import { table } from '../output/output'
import { firstItems } from './_pages'
import { common } from './_shared'
import { count, pointInTime } from './_values'

export default defineCommand({
  meta: {
    name: 'audit',
    description:
      'Who read or changed what, newest first (administrators; a unit of your own with --unit)',
  },
  args: {
    ...common,
    unit: { type: 'string', description: 'only this unit' },
    prefix: { type: 'string', description: 'only units whose ID starts with this' },
    principal: { type: 'string', description: 'only what this subject did' },
    action: {
      type: 'string',
      description: `only this action: ${AUDIT_ACTIONS.join(', ')}`,
    },
    surface: {
      type: 'string',
      description: `only what came in this way: ${AUDIT_SURFACES.join(', ')}`,
    },
    outcome: {
      type: 'string',
      description: 'only what ended so: ok (below 400), refused (4xx), failed (5xx)',
    },
    since: {
      type: 'string',
      description: 'only from this time on: RFC 3339, or how long ago (1h, 7d)',
    },
    until: {
      type: 'string',
      description: 'only before this time: RFC 3339, or how long ago (1h, 7d)',
    },
    limit: { type: 'string', description: 'how many records to show (default 100)' },
  },
  async run({ args }) {
    const filter = {
      ...(args.unit === undefined ? {} : { unit: args.unit }),
      ...(args.prefix === undefined ? {} : { prefix: args.prefix }),
      ...(args.principal === undefined ? {} : { principal: args.principal }),
      ...(args.action === undefined
        ? {}
        : { action: oneOf(args.action, AUDIT_ACTIONS, '--action') }),
      ...(args.surface === undefined
        ? {}
        : { surface: oneOf(args.surface, AUDIT_SURFACES, '--surface') }),
      ...(args.outcome === undefined
        ? {}
        : { outcome: oneOf(args.outcome, AUDIT_OUTCOMES, '--outcome') }),
      ...(args.since === undefined ? {} : { since: pointInTime(args.since, '--since') }),
      ...(args.until === undefined ? {} : { until: pointInTime(args.until, '--until') }),
    }
    const wanted = args.limit === undefined ? 100 : count(args.limit, '--limit')
    const context = await openContext(args)
    const { items: records, nextCursor } = await firstItems(
      wanted,
      MAX_AUDIT_PAGE,
      async (page) => {
        const answer = await context.client.audit.list({ ...filter, ...page })
        return { items: answer.records, nextCursor: answer.nextCursor }
      },
    )
    context.out.result({ records, next_cursor: nextCursor }, () =>
      records.length === 0 ? 'No audit records.' : auditTable(records),
    )
  },
})

function oneOf<T extends string>(text: string, known: readonly T[], flag: string): T {
  if (!(known as readonly string[]).includes(text))
    throw new UsageError(`${flag} must be one of ${known.join(', ')}`)
  return text as T
}

/** One row per record: the refusals show their error code beside the status. */
function auditTable(records: readonly AuditRecord[]): string {
  return table(
    ['TIME', 'ACTION', 'STATUS', 'PRINCIPAL', 'SURFACE', 'UNIT', 'VERSION'],
    records.map((record) => [
      record.time,
      record.action,
      record.outcome.error === undefined
        ? String(record.outcome.status)
        : `${record.outcome.status} ${record.outcome.error}`,
      principalOf(record),
      record.surface,
      record.unit ?? '-',
      record.version ?? '-',
    ]),
  )
}

function principalOf(record: AuditRecord): string {
  const principal = record.principal
  if (principal === null) return '(unauthenticated)'
  return principal.token_name === undefined
    ? principal.subject
    : `${principal.subject} (token ${principal.token_name})`
}
