import type { NeighbourEdge, Neighbourhood, NeighbourNode } from '@cairn/core'
import { unitHref } from './layout'

/** A node's box and the space around it, in SVG user units. */
const NODE_WIDTH = 200
const NODE_HEIGHT = 46
const COLUMN_GAP = 72
const ROW_GAP = 16
const PADDING = 16
/** Room above the nodes for each column's heading. */
const HEADING = 24
/** The height of the lane of each edge that passes over a column. */
const LANE = 10
/** The longest ID a box holds; a longer one keeps its end, which tells units apart best. */
const MAX_LABEL = 26

export interface PlacedNode {
  node: NeighbourNode
  column: number
  x: number
  y: number
}

export interface GraphLayout {
  width: number
  height: number
  /** Each column's heading and where its middle is. */
  columns: { column: number; x: number; heading: string }[]
  nodes: PlacedNode[]
  edges: { edge: NeighbourEdge; path: string }[]
}

/**
 * Places the nodes in columns, upstream to the left and downstream to the right. A node's column
 * starts as its distance from the unit; then each edge pushes its upstream end left (on the
 * upstream side) or its downstream end right (on the other), so that every edge points rightwards
 * even when two of its ends were met at the same distance.
 */
export function layoutGraph(graph: Neighbourhood): GraphLayout {
  const column = new Map(graph.nodes.map((node) => [node.key, node.level]))
  // Each round settles at least one more node of every path; a cycle (never stored) stops here.
  let rounds = graph.nodes.length
  for (let moved = true; moved && rounds > 0; rounds -= 1) {
    moved = false
    for (const { from, to } of graph.edges) {
      const a = column.get(from)
      const b = column.get(to)
      if (a === undefined || b === undefined || a < b) continue
      if (b <= 0) column.set(from, b - 1)
      else column.set(to, a + 1)
      moved = true
    }
  }
  const byColumn = new Map<number, NeighbourNode[]>()
  for (const node of graph.nodes) {
    const at = column.get(node.key) ?? node.level
    byColumn.set(at, [...(byColumn.get(at) ?? []), node])
  }
  const order = [...byColumn.keys()].sort((a, b) => a - b)
  const first = order[0] ?? 0
  const last = order[order.length - 1] ?? 0
  const tallest = Math.max(1, ...[...byColumn.values()].map((nodes) => nodes.length))
  // An edge past a column runs in a lane of its own above the nodes, not through their boxes.
  const long = graph.edges.filter(({ from, to }) => {
    const a = column.get(from)
    const b = column.get(to)
    return a !== undefined && b !== undefined && b - a > 1
  })
  const lanes = long.length === 0 ? 0 : (long.length + 1) * LANE
  const top = PADDING + HEADING + lanes
  const height = top + PADDING + tallest * NODE_HEIGHT + (tallest - 1) * ROW_GAP
  const width = PADDING * 2 + (last - first + 1) * NODE_WIDTH + (last - first) * COLUMN_GAP
  const placed = new Map<string, PlacedNode>()
  for (const [at, nodes] of byColumn) {
    const x = PADDING + (at - first) * (NODE_WIDTH + COLUMN_GAP)
    const stack = nodes.length * NODE_HEIGHT + (nodes.length - 1) * ROW_GAP
    const start = top + (tallest * NODE_HEIGHT + (tallest - 1) * ROW_GAP - stack) / 2
    nodes.forEach((node, row) => {
      placed.set(node.key, { node, column: at, x, y: start + row * (NODE_HEIGHT + ROW_GAP) })
    })
  }
  const edges: GraphLayout['edges'] = []
  for (const edge of graph.edges) {
    const from = placed.get(edge.from)
    const to = placed.get(edge.to)
    if (from === undefined || to === undefined) continue
    const lane = long.indexOf(edge)
    edges.push({
      edge,
      path: lane === -1 ? curve(from, to) : overhead(from, to, PADDING + HEADING + lane * LANE),
    })
  }
  return {
    width,
    height,
    columns: order.map((at) => ({
      column: at,
      x: PADDING + (at - first) * (NODE_WIDTH + COLUMN_GAP) + NODE_WIDTH / 2,
      heading: headingOf(at),
    })),
    nodes: [...placed.values()],
    edges,
  }
}

/** From the right side of the upstream box to the left side of the downstream one. */
function curve(from: PlacedNode, to: PlacedNode): string {
  const x1 = from.x + NODE_WIDTH
  const y1 = from.y + NODE_HEIGHT / 2
  // The arrowhead's tip ends at the box.
  const x2 = to.x - 2
  const y2 = to.y + NODE_HEIGHT / 2
  const bend = Math.max(24, (x2 - x1) / 2)
  return `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`
}

/** Up from the upstream box to its lane, along it, and down into the downstream box. */
function overhead(from: PlacedNode, to: PlacedNode, lane: number): string {
  const x1 = from.x + NODE_WIDTH
  const y1 = from.y + NODE_HEIGHT / 2
  const x2 = to.x - 2
  const y2 = to.y + NODE_HEIGHT / 2
  const turn = COLUMN_GAP / 2
  return (
    `M${x1},${y1} C${x1 + turn / 2},${y1} ${x1 + turn / 2},${lane} ${x1 + turn},${lane} ` +
    `L${x2 - turn},${lane} C${x2 - turn / 2},${lane} ${x2 - turn / 2},${y2} ${x2},${y2}`
  )
}

/** A column's heading: not a distance, since an edge may pass over a column. */
export function headingOf(column: number): string {
  return column === 0 ? 'This unit' : column < 0 ? 'Upstream' : 'Downstream'
}

/** What a node says of its unit's status, in words. */
export function statusWord(node: NeighbourNode): string {
  if (node.hidden) return 'no access'
  return node.status ?? 'no such unit'
}

/** An ID short enough for its box. */
export function shortLabel(id: string): string {
  return id.length <= MAX_LABEL ? id : `\u2026${id.slice(id.length - (MAX_LABEL - 1))}`
}

/** How an edge's end is named in words: its ID, or "a hidden unit". */
export function nameOf(graph: Neighbourhood, key: string): string {
  const node = graph.nodes.find((candidate) => candidate.key === key)
  return node?.id ?? 'a unit you may not read'
}

/**
 * The neighbourhood of a unit drawn as an SVG: nodes coloured by status (the CSS classes of
 * `svg.graph`, never a style attribute), each a link to its unit's page, and edges with arrows,
 * pending ones dashed. `name` makes the IDs inside it unique on the page.
 */
export function GraphSvg({ graph, name }: { graph: Neighbourhood; name: string }) {
  const layout = layoutGraph(graph)
  const titleId = `${name}-title`
  const descId = `${name}-desc`
  const arrow = `${name}-arrow`
  const upstreams = graph.nodes.filter((node) => node.level < 0).length
  const downstreams = graph.nodes.filter((node) => node.level > 0).length
  return (
    <svg
      class="graph"
      role="img"
      aria-labelledby={`${titleId} ${descId}`}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
      xmlns="http://www.w3.org/2000/svg"
    >
      <title id={titleId}>{`Dependencies of ${graph.focus}`}</title>
      <desc id={descId}>
        {`${upstreams} ${upstreams === 1 ? 'unit' : 'units'} upstream, ${downstreams} downstream; the list below tells the same.`}
      </desc>
      <defs>
        {(['', 'pending'] as const).map((kind) => (
          <marker
            id={kind === '' ? arrow : `${arrow}-${kind}`}
            viewBox="0 0 10 10"
            refX="9"
            refY="5"
            markerWidth="8"
            markerHeight="8"
            orient="auto"
          >
            <path class={kind === '' ? 'arrow' : `arrow ${kind}`} d="M0,0 L10,5 L0,10 z" />
          </marker>
        ))}
      </defs>
      {layout.columns.map((column) => (
        <text class="heading" x={column.x} y={PADDING + 12} text-anchor="middle">
          {column.heading}
        </text>
      ))}
      {layout.edges.map(({ edge, path }) => (
        <path
          class={`edge ${edge.state}`}
          d={path}
          marker-end={`url(#${edge.state === 'pending' ? `${arrow}-pending` : arrow})`}
          data-from={edge.from}
          data-to={edge.to}
        >
          <title>{`${nameOf(graph, edge.from)} \u2192 ${nameOf(graph, edge.to)}: ${edge.state}`}</title>
        </path>
      ))}
      {layout.nodes.map((placed) => (
        <GraphNode placed={placed} focus={placed.node.key === graph.focus} />
      ))}
    </svg>
  )
}

function GraphNode({ placed, focus }: { placed: PlacedNode; focus: boolean }) {
  const { node, x, y } = placed
  const classes = ['node', node.hidden ? 'hidden' : (node.status ?? 'missing')]
  if (focus) classes.push('focus')
  const box = (
    <g class={classes.join(' ')}>
      <title>{node.id ?? 'A unit you may not read'}</title>
      <rect x={x} y={y} width={NODE_WIDTH} height={NODE_HEIGHT} rx="8" ry="8" />
      <text x={x + 10} y={y + 19}>
        {node.id === null ? 'hidden' : shortLabel(node.id)}
      </text>
      <text class="word" x={x + 10} y={y + 36}>
        {statusWord(node)}
      </text>
    </g>
  )
  if (node.id === null) return box
  return <a href={unitHref(node.id)}>{box}</a>
}
