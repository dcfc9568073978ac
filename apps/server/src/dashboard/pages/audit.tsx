import { AUDIT_ACTIONS, AUDIT_OUTCOMES, AUDIT_SURFACES, type AuditRecord } from '@cairn/contract'
import { InvalidRequestError } from '@cairn/core'
import { Hono, type Context } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { At, DataTable, Notice, Page, exact, unitHref } from '../view/layout'

export const AUDIT = '/app/audit'

/** The records of one page of the trail. */
const PAGE_SIZE = 50

/** The filters of the form, as the URL carries them. */
const FILTERS = [
  'unit',
  'prefix',
  'principal',
  'action',
  'surface',
  'outcome',
  'since',
  'until',
] as const
type Filters = Partial<Record<(typeof FILTERS)[number], string>>

/** What each outcome of the filter means, as the form offers it. */
const OUTCOME_LABELS: Record<(typeof AUDIT_OUTCOMES)[number], string> = {
  ok: 'ok (below 400)',
  refused: 'refused (4xx)',
  failed: 'failed (5xx)',
}

/**
 * The audit trail (`GET /v1/audit` as a page): newest first, filtered, one page at a time, each
 * record's detail folded under it. Administrators read it all; anyone else only the trail of a
 * unit they manage (`?unit=`, linked from its page), as the API lets them; otherwise the 403 page.
 */
export function auditRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get(AUDIT, async (c) => {
    const filters: Filters = {}
    for (const name of FILTERS) {
      const value = queryOf(c, name)
      if (value !== undefined) filters[name] = value
    }
    const cursor = queryOf(c, 'cursor')
    const now = deps.clock.now()
    try {
      // Checked by the trail's own schema, which names what is wrong.
      const query = {
        ...queryOfFilters(filters, now),
        limit: PAGE_SIZE,
        ...(cursor === undefined ? {} : { cursor }),
      }
      const page = await deps.audit.read(c.var.principal, query)
      return await c.html(
        <AuditPage
          c={c}
          deps={deps}
          filters={filters}
          records={page.records}
          next={page.nextCursor}
          paged={cursor !== undefined}
        />,
      )
    } catch (error) {
      if (!(error instanceof InvalidRequestError)) throw error
      return c.html(
        <AuditPage c={c} deps={deps} filters={filters} error={error.message} paged={false} />,
        400,
      )
    }
  })
  return app
}

/** The filters as the trail's query: a time may be how long ago (`1h`, `7d`) as the CLI takes it. */
function queryOfFilters(filters: Filters, now: number): Record<string, unknown> {
  const query: Record<string, unknown> = { ...filters }
  for (const name of ['since', 'until'] as const) {
    const value = filters[name]
    if (value !== undefined) query[name] = pointInTime(value, name, now)
  }
  return query
}

const AGO = /^(\d{1,6})(m|h|d)$/
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const

function pointInTime(text: string, name: string, now: number): string {
  const ago = AGO.exec(text)
  if (ago !== null) {
    const amount = Number(ago[1])
    return new Date(now - amount * UNIT_MS[ago[2] as keyof typeof UNIT_MS]).toISOString()
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text)) return `${text}:00Z`
  if (!/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    throw new InvalidRequestError(
      `${name} must be a time such as 2026-11-30T10:00:00Z or 2026-11-30, or how long ago such as 1h or 7d`,
    )
  }
  return text
}

function hrefOf(filters: Filters, extra: Record<string, string> = {}): string {
  const query = new URLSearchParams({ ...filters, ...extra }).toString()
  return query === '' ? AUDIT : `${AUDIT}?${query}`
}

function AuditPage(props: {
  c: Context<AppEnv>
  deps: DashboardDeps
  filters: Filters
  records?: AuditRecord[]
  next?: string | null
  paged: boolean
  error?: string
}) {
  const { c, deps, filters } = props
  const viewer = viewerOf(c, deps.mode)
  const now = deps.clock.now()
  const records = props.records ?? []
  const title = filters.unit === undefined ? 'Audit trail' : `Audit trail of ${filters.unit}`
  return (
    <Page title={title} section={viewer.administrator ? 'audit' : undefined} viewer={viewer}>
      <h1>{title}</h1>
      <Notice text={props.error} error />
      <p class="muted">
        Who read or changed what, newest first, on every way in, refusals included.
        {filters.unit === undefined ? null : (
          <>
            {' '}
            <a href={unitHref(filters.unit)}>Back to the unit</a>
          </>
        )}
      </p>
      <form class="filters" method="get" action={AUDIT} aria-label="Filters">
        <label>
          Unit
          <input name="unit" value={filters.unit ?? ''} placeholder="team/app/prod" />
        </label>
        <label>
          Prefix
          <input name="prefix" value={filters.prefix ?? ''} placeholder="team/" />
        </label>
        <label>
          Principal
          <input name="principal" value={filters.principal ?? ''} placeholder="alice" />
        </label>
        <Choice name="action" label="Action" value={filters.action} options={AUDIT_ACTIONS} />
        <Choice name="surface" label="Way in" value={filters.surface} options={AUDIT_SURFACES} />
        <Choice
          name="outcome"
          label="Outcome"
          value={filters.outcome}
          options={AUDIT_OUTCOMES}
          labels={OUTCOME_LABELS}
        />
        <label>
          Since
          <input name="since" value={filters.since ?? ''} placeholder="7d or 2026-11-30" />
        </label>
        <label>
          Until
          <input name="until" value={filters.until ?? ''} placeholder="1h or 2026-11-30T12:00" />
        </label>
        <button type="submit">Filter</button>
        <a class="button secondary" href={AUDIT}>
          Clear
        </a>
      </form>
      {props.error !== undefined ? null : records.length === 0 ? (
        <p class="muted">
          {props.next === null || props.next === undefined
            ? 'No audit record matches.'
            : 'No record in this stretch of the trail; older ones may match.'}
        </p>
      ) : (
        <DataTable
          caption="Audit records, newest first"
          columns={['Time (UTC)', 'Action', 'Outcome', 'Who', 'Way in', 'Unit', 'Detail']}
        >
          {records.map((record) => (
            <Row record={record} now={now} />
          ))}
        </DataTable>
      )}
      <nav class="pager" aria-label="Pages">
        {props.paged ? <a href={hrefOf(filters)}>Newest</a> : null}
        {props.next === null || props.next === undefined ? null : (
          <a href={hrefOf(filters, { cursor: props.next })}>Older records</a>
        )}
      </nav>
    </Page>
  )
}

function Choice(props: {
  name: string
  label: string
  value: string | undefined
  options: readonly string[]
  labels?: Record<string, string>
}) {
  return (
    <label>
      {props.label}
      <select name={props.name}>
        <option value="">any</option>
        {props.options.map((option) => (
          <option value={option} selected={option === props.value}>
            {props.labels?.[option] ?? option}
          </option>
        ))}
      </select>
    </label>
  )
}

function Row({ record, now }: { record: AuditRecord; now: number }) {
  const { outcome, principal } = record
  const refused = outcome.status >= 400
  return (
    <tr>
      <td data-label="Time">
        <At iso={record.time} now={now} />
      </td>
      <td data-label="Action" class="mono">
        {record.action}
      </td>
      <td data-label="Outcome">
        <span class={refused ? 'badge pending' : 'badge ok'}>
          {outcome.status}
          {outcome.error === undefined ? '' : ` ${outcome.error}`}
        </span>
      </td>
      <td data-label="Who">
        {principal === null ? (
          <span class="muted">unauthenticated</span>
        ) : (
          <>
            {principal.subject}
            {principal.token_name === undefined ? null : (
              <span class="muted"> (token {principal.token_name})</span>
            )}
          </>
        )}
      </td>
      <td data-label="Way in">{record.surface}</td>
      <td data-label="Unit">
        {record.unit === undefined ? (
          <span class="muted">none</span>
        ) : (
          <a class="mono" href={unitHref(record.unit)}>
            {record.unit}
          </a>
        )}
      </td>
      <td data-label="Detail">
        <details>
          <summary>Record {record.id}</summary>
          <dl class="facts">
            <dt>Time</dt>
            <dd>
              <time datetime={record.time}>{exact(record.time)}</time>
            </dd>
            {record.version === undefined ? null : (
              <>
                <dt>Version</dt>
                <dd class="mono">{record.version}</dd>
              </>
            )}
            {principal?.issuer === undefined ? null : (
              <>
                <dt>Issuer</dt>
                <dd class="mono">{principal.issuer}</dd>
              </>
            )}
            {principal?.token_id === undefined ? null : (
              <>
                <dt>Token</dt>
                <dd class="mono">{principal.token_id}</dd>
              </>
            )}
            {record.client_address === undefined ? null : (
              <>
                <dt>From</dt>
                <dd class="mono">{record.client_address}</dd>
              </>
            )}
            {record.request_id === undefined ? null : (
              <>
                <dt>Request</dt>
                <dd class="mono">{record.request_id}</dd>
              </>
            )}
            {Object.entries(record.detail ?? {}).map(([name, value]) => (
              <>
                <dt>{name}</dt>
                <dd class="mono">{value}</dd>
              </>
            ))}
          </dl>
        </details>
      </td>
    </tr>
  )
}
