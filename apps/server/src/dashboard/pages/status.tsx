import type { Core, Principal } from '@cairn/core'
import type { UnitStatus } from '@cairn/contract'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, DataTable, hiddenUnits, Page, StatusDot, unitHref } from '../view/layout'

/** Units read for one page of status: enough for a plan, few enough to answer at once. */
const MAX_UNITS = 1000
/** Unit records one listing asks for. */
const LISTING = 250

/** The units of a prefix with their statuses, read a listing at a time. */
interface Statuses {
  units: UnitStatus[]
  /** Where the next page starts; null when every unit was read. */
  nextCursor: string | null
}

/**
 * What to apply across a prefix, and in which order: the count of units of each colour, then the
 * red and yellow units upstream before downstream (a topological order of the edges between the
 * units read), each with why, and the green ones folded away. Up to `MAX_UNITS` units a page.
 */
export function statusRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/status', async (c) => {
    const prefix = queryOf(c, 'prefix')
    const cursor = queryOf(c, 'cursor')
    const read = await readStatuses(deps.core, c.var.principal, prefix, cursor)
    const count = (colour: UnitStatus['status']) =>
      read.units.filter((unit) => unit.status === colour).length
    const plan = applyOrder(read.units)
    const green = read.units.filter((unit) => unit.status === 'green')
    const filter = prefix === undefined ? {} : { prefix }
    const now = deps.clock.now()
    return c.html(
      <Page title="Status" section="status" viewer={viewerOf(c, deps.mode)}>
        <h1>Status</h1>
        <form class="filters" method="get" action="/app/status" role="search">
          <label>
            ID prefix
            <input name="prefix" value={prefix ?? ''} placeholder="team/" />
          </label>
          <button type="submit">Show</button>
          {prefix === undefined ? null : (
            <a class="button secondary" href="/app/status">
              Clear
            </a>
          )}
        </form>
        {cursor === undefined ? null : (
          <p class="muted">
            The units after {cursor}: an order only covers the units of its own page.
          </p>
        )}
        <div class="grid" aria-label="Units by status">
          {(['red', 'yellow', 'green'] as const).map((colour) => (
            <p class="panel">
              <StatusDot status={colour} /> <strong>{count(colour)}</strong>{' '}
              {count(colour) === 1 ? 'unit' : 'units'}
            </p>
          ))}
        </div>
        <h2>To apply, in this order</h2>
        {read.units.length === 0 ? (
          <p class="muted">No unit here that you may read.</p>
        ) : plan.length === 0 ? (
          <p>Nothing to apply: every unit here is green.</p>
        ) : (
          <DataTable
            caption="Units to apply, upstream first"
            columns={[{ label: 'Step', num: true }, 'Unit', 'Status', 'Why']}
          >
            {plan.map(({ unit, step }) => (
              <tr>
                <td data-label="Step" class="num">
                  {step}
                </td>
                <td data-label="Unit">
                  <a href={unitHref(unit.id)}>{unit.id}</a>
                </td>
                <td data-label="Status">
                  <StatusDot status={unit.status} />
                </td>
                <td data-label="Why">
                  <Why unit={unit} now={now} />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        {plan.length === 0 ? null : (
          <p class="muted">
            Units of one step do not depend on each other and may be applied side by side.
          </p>
        )}
        {green.length === 0 ? null : (
          <>
            <h2>Green</h2>
            <details>
              <summary>
                {green.length} {green.length === 1 ? 'unit is' : 'units are'} up to date
              </summary>
              <ul>
                {green.map((unit) => (
                  <li>
                    <a href={unitHref(unit.id)}>{unit.id}</a>
                  </li>
                ))}
              </ul>
            </details>
          </>
        )}
        <nav class="pager" aria-label="Pages">
          {cursor === undefined ? null : <a href={hrefOf(filter)}>First units</a>}
          {read.nextCursor === null ? null : (
            <>
              <span class="muted">
                More units follow: this page read {MAX_UNITS.toLocaleString('en')} at most.
              </span>
              <a href={hrefOf({ ...filter, cursor: read.nextCursor })} rel="next">
                Next units
              </a>
            </>
          )}
        </nav>
      </Page>,
    )
  })
  return app
}

/** Why a unit needs an apply: its pending edges, or the red units upstream it waits for. */
function Why({ unit, now }: { unit: UnitStatus; now: number }) {
  const pending = unit.edges.filter((edge) => edge.state === 'pending')
  return (
    <ul class="reasons">
      {pending.map((edge) => (
        <li>
          <a href={unitHref(edge.from)}>{edge.from}</a>
          {edge.output === undefined ? (
            ' changed'
          ) : (
            <>
              {' '}
              output <code>{edge.output}</code> changed
            </>
          )}
          {edge.since === undefined ? null : (
            <>
              {' '}
              in its version of <Ago iso={edge.since.timestamp} now={now} />
              {edge.since.serial === null ? null : ` (serial ${edge.since.serial})`}
            </>
          )}
        </li>
      ))}
      {unit.red_upstream.length === 0 && unit.red_upstream_hidden === undefined ? null : (
        <li>
          waits for{' '}
          {unit.red_upstream.map((upstream, index) => (
            <>
              {index === 0 ? '' : ', '}
              <a href={unitHref(upstream)}>{upstream}</a>
            </>
          ))}
          {hiddenUnits(unit.red_upstream.length, unit.red_upstream_hidden)} upstream
        </li>
      )}
    </ul>
  )
}

/** Up to `MAX_UNITS` units from `cursor` on, a listing at a time. */
async function readStatuses(
  core: Core,
  principal: Principal,
  prefix: string | undefined,
  cursor: string | undefined,
): Promise<Statuses> {
  const units: UnitStatus[] = []
  let next = cursor
  // Bounded by the records listed, not by those shown: a reader of few units in a large prefix
  // still gets an answer at once.
  for (let listed = 0; listed < MAX_UNITS; listed += LISTING) {
    const page = await core.dependencies.statuses(principal, {
      limit: LISTING,
      ...(prefix === undefined ? {} : { prefix }),
      ...(next === undefined ? {} : { cursor: next }),
    })
    units.push(...page.items)
    if (page.nextCursor === null) return { units, nextCursor: null }
    next = page.nextCursor
  }
  return { units, nextCursor: next ?? null }
}

/**
 * The red and yellow units, upstream first: a topological order of the edges between the units
 * read (green ones among them too, so that an order passing through a green unit holds), and of
 * each unit's red upstreams (which keep the order when a unit between them was not read). Each
 * unit's step is one more than the highest step upstream of it; a unit whose upstreams lie
 * elsewhere is at step 1. Ties go by ID.
 */
export function applyOrder(units: readonly UnitStatus[]): { unit: UnitStatus; step: number }[] {
  const byId = new Map(units.map((unit) => [unit.id, unit]))
  const waiting = new Map<string, number>()
  const downstream = new Map<string, string[]>()
  for (const unit of units) {
    const upstreams = new Set(upstreamsOf(unit).filter((id) => byId.has(id)))
    waiting.set(unit.id, upstreams.size)
    for (const upstream of upstreams) {
      downstream.set(upstream, [...(downstream.get(upstream) ?? []), unit.id])
    }
  }
  let ready = units.filter((unit) => waiting.get(unit.id) === 0).map((unit) => unit.id)
  const ordered: string[] = []
  const placed = new Set<string>()
  while (ready.length > 0) {
    const next: string[] = []
    for (const id of ready) {
      ordered.push(id)
      placed.add(id)
      for (const consumer of downstream.get(id) ?? []) {
        const left = (waiting.get(consumer) ?? 0) - 1
        waiting.set(consumer, left)
        if (left === 0) next.push(consumer)
      }
    }
    ready = next
  }
  // A cycle cannot be declared; should one be read half-written, its units come last.
  for (const unit of units) if (!placed.has(unit.id)) ordered.push(unit.id)
  // Steps count only the units to apply: green ones in between need nothing.
  const steps = new Map<string, number>()
  for (const id of ordered) {
    const unit = byId.get(id) as UnitStatus
    const upstream = Math.max(0, ...upstreamsOf(unit).map((id) => steps.get(id) ?? 0))
    steps.set(id, unit.status === 'green' ? upstream : upstream + 1)
  }
  return ordered
    .map((id) => ({ unit: byId.get(id) as UnitStatus, step: steps.get(id) as number }))
    .filter(({ unit }) => unit.status !== 'green')
    .sort((a, b) => a.step - b.step || (a.unit.id < b.unit.id ? -1 : a.unit.id > b.unit.id ? 1 : 0))
}

/** What a unit must be applied after: the units of its edges, and the red units upstream. */
function upstreamsOf(unit: UnitStatus): string[] {
  return [...unit.edges.map((edge) => edge.from), ...unit.red_upstream]
}

/** This page's address with `query`, without a bare `?` when there is none. */
function hrefOf(query: Record<string, string>): string {
  const search = new URLSearchParams(query).toString()
  return search === '' ? '/app/status' : `/app/status?${search}`
}
