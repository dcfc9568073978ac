import { parseUnitId, type NeighbourNode } from '@cairn/core'
import { Hono } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { queryOf, viewerOf, type DashboardDeps } from '../context'
import { GraphSvg, statusWord } from '../view/graph-svg'
import { DataTable, Page, StatusDot, unitHref } from '../view/layout'

/** How many edges away from the unit the drawing goes, each way. */
const DEPTH = 2
/** How many units it draws at most: beyond that a drawing is no longer read. */
const LIMIT = 100

/**
 * A unit's neighbourhood in the dependency graph: what it consumes (up to two edges upstream) and
 * what consumes it (two edges downstream), drawn as an SVG coloured by status and told again as
 * lists for screen readers and small screens. Units the person may not read are shown as hidden
 * nodes, without their IDs.
 */
export function graphRoutes(deps: DashboardDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>()
  app.get('/app/unit/graph', async (c) => {
    const id = parseUnitId(queryOf(c, 'id') ?? '')
    const graph = await deps.core.dependencies.neighbourhood(c.var.principal, id, {
      depth: DEPTH,
      limit: LIMIT,
    })
    const others = graph.nodes.filter((node) => node.key !== graph.focus)
    const byKey = new Map(graph.nodes.map((node) => [node.key, node]))
    const focus = byKey.get(graph.focus)
    return c.html(
      <Page title={`Graph of ${id}`} section="units" viewer={viewerOf(c, deps.mode)}>
        <p>
          <a href={unitHref(id)}>Back to {id}</a>
        </p>
        <h1>Dependencies of {id}</h1>
        <p>
          Status: <StatusDot status={focus?.status ?? undefined} />
        </p>
        <p class="muted">
          Upstream units (what this unit reads) are on the left, downstream units (what reads it) on
          the right, up to {DEPTH} edges away. A dashed arrow is a pending edge: its upstream
          changed since the downstream unit was last applied.
        </p>
        {graph.truncated ? (
          <p class="notice" role="status">
            Only the nearest {LIMIT} units are shown.
          </p>
        ) : null}
        {others.length === 0 ? (
          <p>This unit has no dependencies, and no unit depends on it.</p>
        ) : (
          <>
            <div class="scroll">
              <GraphSvg graph={graph} name="graph" />
            </div>
            <h2>Units</h2>
            <DataTable caption={`Units around ${id}`} columns={['Unit', 'Where', 'Status']}>
              {others.map((node) => (
                <tr>
                  <td data-label="Unit">
                    <NodeName node={node} />
                  </td>
                  <td data-label="Where">{whereOf(node.level)}</td>
                  <td data-label="Status">
                    {node.status === null ? (
                      <span class="muted">{statusWord(node)}</span>
                    ) : (
                      <StatusDot status={node.status} />
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
            <h2>Edges</h2>
            <DataTable
              caption="Edges between them"
              columns={['From (upstream)', 'To (downstream)', 'State', 'Outputs']}
            >
              {graph.edges.map((edge) => (
                <tr>
                  <td data-label="From">
                    <NodeName node={byKey.get(edge.from)} />
                  </td>
                  <td data-label="To">
                    <NodeName node={byKey.get(edge.to)} />
                  </td>
                  <td data-label="State">{edge.state}</td>
                  <td data-label="Outputs">
                    {edge.outputs.length === 0 ? (
                      <span class="muted">the whole state</span>
                    ) : (
                      <span class="mono">{edge.outputs.join(', ')}</span>
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          </>
        )}
      </Page>,
    )
  })
  return app
}

function NodeName({ node }: { node: NeighbourNode | undefined }) {
  if (node?.id == null) return <span class="muted">a unit you may not read</span>
  return <a href={unitHref(node.id)}>{node.id}</a>
}

function whereOf(level: number): string {
  const edges = Math.abs(level) === 1 ? '1 edge' : `${Math.abs(level)} edges`
  return level < 0 ? `upstream, ${edges} away` : `downstream, ${edges} away`
}
