import type { HeldLockView } from '@cairn/contract'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { flashed, may, queryOf, viewerOf, type DashboardDeps } from '../context'
import { Ago, DataTable, Notice, Page, unitHref } from '../view/layout'

/** Locks a page: each asks whether the person may force it open. */
const PAGE = 50

/**
 * Every lock held on a unit the signed-in person may read, by unit ID, a page at a time: who
 * holds it, for what, since when, whether it is stale, and a way to force it open for those who
 * manage the unit (through a confirmation page).
 */
export function locksRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/locks', async (c) => {
    const prefix = queryOf(c, 'prefix')
    const cursor = queryOf(c, 'cursor')
    const page = await deps.core.locks.list(c.var.principal, {
      limit: PAGE,
      ...(prefix === undefined ? {} : { prefix }),
      ...(cursor === undefined ? {} : { cursor }),
    })
    const manages = await Promise.all(
      page.items.map((held) => may(c, deps.core, 'unit:manage', held.unit)),
    )
    const now = deps.clock.now()
    const filter = prefix === undefined ? {} : { prefix }
    return c.html(
      <Page title="Locks" section="locks" viewer={viewerOf(c, deps.mode)}>
        <h1>Locks</h1>
        <Notice {...flashed(c)} />
        <form class="filters" method="get" action="/app/locks" role="search">
          <label>
            ID prefix
            <input name="prefix" value={prefix ?? ''} placeholder="team/" />
          </label>
          <button type="submit">Filter</button>
          {prefix === undefined ? null : (
            <a class="button secondary" href="/app/locks">
              Clear
            </a>
          )}
        </form>
        {page.items.length === 0 ? (
          <p class="muted">
            {cursor === undefined
              ? 'No lock is held on a unit here that you may read.'
              : 'No more locks.'}
          </p>
        ) : (
          <DataTable
            caption="Locks held"
            columns={['Unit', 'Holder', 'Operation', 'Taken', 'State', 'Actions']}
          >
            {page.items.map((held, index) => (
              <LockRow held={held} now={now} manages={manages[index] === true} />
            ))}
          </DataTable>
        )}
        <nav class="pager" aria-label="Pages">
          {cursor === undefined ? null : <a href={hrefOf(filter)}>First page</a>}
          {page.nextCursor === null ? null : (
            <a href={hrefOf({ ...filter, cursor: page.nextCursor })} rel="next">
              Next page
            </a>
          )}
        </nav>
      </Page>,
    )
  })
  return app
}

function LockRow({ held, now, manages }: { held: HeldLockView; now: number; manages: boolean }) {
  const who = held.lock.Who
  return (
    <tr>
      <td data-label="Unit">
        <a href={unitHref(held.unit)}>{held.unit}</a>
      </td>
      <td data-label="Holder">
        {who === '' ? held.holder.subject : who}
        {who === '' || who === held.holder.subject ? null : (
          <span class="muted"> ({held.holder.subject})</span>
        )}
      </td>
      <td data-label="Operation">
        {held.lock.Operation === '' ? <span class="muted">none given</span> : held.lock.Operation}
        <span class="muted"> via {held.source}</span>
      </td>
      <td data-label="Taken">
        <Ago iso={held.acquired} now={now} />
      </td>
      <td data-label="State">
        {held.stale ? (
          <span class="badge stale">stale</span>
        ) : (
          <span class="badge locked">held</span>
        )}
      </td>
      <td data-label="Actions">
        {manages ? (
          <a
            class="button danger"
            href={`/app/unit/unlock?${new URLSearchParams({ id: held.unit }).toString()}`}
          >
            Force unlock<span class="skip"> {held.unit}</span>
          </a>
        ) : (
          <span class="muted">—</span>
        )}
      </td>
    </tr>
  )
}

/** This page's address with `query`, without a bare `?` when there is none. */
function hrefOf(query: Record<string, string>): string {
  const search = new URLSearchParams(query).toString()
  return search === '' ? '/app/locks' : `/app/locks?${search}`
}
