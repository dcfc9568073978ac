import type { SearchPage } from '@cairn/contract'
import { Hono } from 'hono'
import { noteAudit } from '../../audit/audit-trail'
import { noteSearch } from '../../audit/search-note'
import type { AppEnv } from '../../http/app-env'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { DataTable, Page, unitHref } from '../view/layout'

/** Hits a page. */
const PAGE = 100

/**
 * A search of the resources in the current states of the units the signed-in person may read,
 * by address, type or ID (as `/v1/search`), saying plainly which units could not be searched.
 */
export function searchRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/search', deps.heavyRead, async (c) => {
    const q = queryOf(c, 'q')
    const type = queryOf(c, 'type')
    const cursor = queryOf(c, 'cursor')
    const asked = q !== undefined || type !== undefined
    // The empty form is no search.
    if (asked) noteSearch(c, { q, type })
    else noteAudit(c, { skip: true })
    const page = asked
      ? await deps.resources.search(c.var.principal, {
          limit: PAGE,
          ...(q === undefined ? {} : { q }),
          ...(type === undefined ? {} : { type }),
          ...(cursor === undefined ? {} : { cursor }),
        })
      : undefined
    if (page !== undefined) noteSearch(c, { q, type }, page)
    const filter = { ...(q === undefined ? {} : { q }), ...(type === undefined ? {} : { type }) }
    return c.html(
      <Page title="Search" section="search" viewer={viewerOf(c, deps.mode)}>
        <h1>Search</h1>
        <form class="filters" method="get" action="/app/search" role="search">
          <label>
            Address, type or ID
            <input name="q" value={q ?? ''} placeholder="aws_instance.web" />
          </label>
          <label>
            Resource type
            <input name="type" value={type ?? ''} placeholder="aws_s3_bucket" />
          </label>
          <button type="submit">Search</button>
        </form>
        {page === undefined ? (
          <p class="muted">
            Search the resources of the current states by address (whole or its beginning), by type,
            or by an ID such as a bucket name or an instance ID.
          </p>
        ) : (
          <Results page={page} first={cursor === undefined} />
        )}
        {page?.next_cursor == null ? null : (
          <nav class="pager" aria-label="Pages">
            <a href={`/app/search?${new URLSearchParams(filter).toString()}`}>First page</a>
            <a
              href={`/app/search?${new URLSearchParams({ ...filter, cursor: page.next_cursor }).toString()}`}
              rel="next"
            >
              Next page
            </a>
          </nav>
        )}
      </Page>,
    )
  })
  return app
}

function Results({ page, first }: { page: SearchPage; first: boolean }) {
  const missing = page.not_indexed_count
  return (
    <>
      {missing === 0 ? null : (
        <div class="notice error" role="status">
          <p>
            {missing === 1 ? '1 unit is' : `${missing} units are`} not indexed, so{' '}
            {missing === 1 ? 'it was' : 'they were'} not searched: the results may miss what{' '}
            {missing === 1 ? 'it holds' : 'they hold'}.
          </p>
          <details>
            <summary>Which</summary>
            <ul>
              {page.not_indexed.map((unit) => (
                <li>
                  <a href={unitHref(unit.unit)}>{unit.unit}</a>: {unit.reason}
                </li>
              ))}
              {missing > page.not_indexed.length ? (
                <li>and {missing - page.not_indexed.length} more</li>
              ) : null}
            </ul>
          </details>
        </div>
      )}
      {page.results.length === 0 ? (
        <p>{first ? 'Nothing found.' : 'No more results.'}</p>
      ) : (
        <DataTable
          caption="Resources found"
          columns={['Unit', 'Address', 'Type', 'Matched', 'Version']}
        >
          {page.results.map((hit) => (
            <tr>
              <td data-label="Unit">
                <a href={unitHref(hit.unit)}>{hit.unit}</a>
              </td>
              <td data-label="Address" class="mono">
                {hit.address}
              </td>
              <td data-label="Type" class="mono">
                {hit.type}
              </td>
              <td data-label="Matched">
                {hit.match}
                {hit.value === undefined ? null : <span class="mono"> {hit.value}</span>}
              </td>
              <td data-label="Version" class="mono">
                {hit.version}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  )
}
