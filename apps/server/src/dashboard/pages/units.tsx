import type { Core, UnitId } from '@cairn/core'
import type { Unit } from '@cairn/contract'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { flashed, queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, DataTable, Notice, Page, size, StatusDot, TagLinks, unitHref } from '../view/layout'

/** Units per page: the page reads this many records and their statuses, whatever the store. */
const PAGE = 50

type Colour = 'red' | 'yellow' | 'green'

/**
 * The units the signed-in person may read, a page at a time (by cursor, so the tenth thousand is
 * as quick as the first), filtered by ID prefix and tags: status, lock, size, last write.
 */
export function unitsRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/units', async (c) => {
    const prefix = queryOf(c, 'prefix')
    const tags = (queryOf(c, 'tags') ?? '')
      .split(',')
      .map((tag) => tag.trim())
      .filter((tag) => tag !== '')
    const cursor = queryOf(c, 'cursor')
    const page = await deps.core.units.list(c.var.principal, {
      limit: PAGE,
      ...(prefix === undefined ? {} : { prefix }),
      ...(tags.length === 0 ? {} : { tags }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    const statuses = await statusesOf(deps.core, c.var.principal, page.items)
    const now = deps.clock.now()
    const filter = { ...(prefix === undefined ? {} : { prefix }), tags: tags.join(',') }
    const nextHref =
      page.nextCursor === null
        ? undefined
        : `/app/units?${new URLSearchParams({ ...filter, cursor: page.nextCursor }).toString()}`
    return c.html(
      <Page title="Units" section="units" viewer={viewerOf(c, deps.mode)}>
        <h1>Units</h1>
        <Notice {...flashed(c)} />
        <form class="filters" method="get" action="/app/units" role="search">
          <label>
            ID prefix
            <input name="prefix" value={prefix ?? ''} placeholder="team/" />
          </label>
          <label>
            Tags (all of)
            <input name="tags" value={tags.join(',')} placeholder="prod,eu" />
          </label>
          <button type="submit">Filter</button>
          {prefix !== undefined || tags.length > 0 ? (
            <a class="button secondary" href="/app/units">
              Clear
            </a>
          ) : null}
        </form>
        {page.items.length === 0 ? (
          <p class="muted">
            {cursor === undefined ? 'No unit here that you may read.' : 'No more units.'}
          </p>
        ) : (
          <DataTable
            caption="Units"
            columns={[
              'Unit',
              'Status',
              'Lock',
              { label: 'Size', num: true },
              { label: 'Versions', num: true },
              'Last write',
              'Tags',
            ]}
          >
            {page.items.map((unit) => (
              <tr>
                <td data-label="Unit">
                  <a href={unitHref(unit.id)}>{unit.id}</a>
                </td>
                <td data-label="Status">
                  <StatusDot status={statuses.get(unit.id)} />
                </td>
                <td data-label="Lock">
                  <LockBadge unit={unit} now={now} />
                </td>
                <td data-label="Size" class="num">
                  {unit.version_count === 0 ? '—' : size(unit.size)}
                </td>
                <td data-label="Versions" class="num">
                  {unit.version_count}
                </td>
                <td data-label="Last write">
                  {unit.version_count === 0 ? (
                    <span class="muted">no state yet</span>
                  ) : (
                    <Ago iso={unit.updated} now={now} />
                  )}
                </td>
                <td data-label="Tags">
                  <TagLinks tags={unit.tags} />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        <nav class="pager" aria-label="Pages">
          {cursor === undefined ? null : (
            <a href={`/app/units?${new URLSearchParams(filter).toString()}`}>First page</a>
          )}
          {nextHref === undefined ? null : (
            <a href={nextHref} rel="next">
              Next page
            </a>
          )}
        </nav>
      </Page>,
    )
  })
  return app
}

/** A unit's lock as a badge: who holds it and for how long, marked when stale. */
export function LockBadge({ unit, now }: { unit: Unit; now: number }) {
  if (!unit.locked || unit.lock === null) return <span class="muted">unlocked</span>
  return (
    <span
      class={unit.lock_stale ? 'badge stale' : 'badge locked'}
      title={`${unit.lock.Operation} by ${unit.lock.Who}`}
    >
      {unit.lock_stale ? 'stale lock' : 'locked'} · {unit.lock.Who} ·{' '}
      <Ago iso={unit.lock.Created} now={now} />
    </span>
  )
}

/** The status colour of each unit of a page, from one reading of the graph. */
async function statusesOf(
  core: Core,
  principal: Parameters<Core['dependencies']['statusesOf']>[0],
  units: readonly Unit[],
): Promise<Map<string, Colour>> {
  const statuses = await core.dependencies.statusesOf(
    principal,
    units.map((unit) => unit.id as UnitId),
  )
  return new Map(statuses.map((status) => [status.id, status.status]))
}
