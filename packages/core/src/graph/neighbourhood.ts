import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { InvalidRequestError, UnitNotFoundError } from '../errors'
import type { Kernel } from '../kernel'
import type { UnitId } from '../units/unit-id'
import type { EdgeStatus, UnitStatus } from '@cairn/contract'
import { consumersOf } from './consumer-marks'
import type { GraphCache } from './graph-cache'
import { GraphNodes } from './graph-loader'

const DEFAULT_DEPTH = 2
const MAX_DEPTH = 4
const DEFAULT_LIMIT = 100
const MAX_LIMIT = 1000

/** A unit around the one asked about, as a drawing of the graph shows it. */
export interface NeighbourNode {
  /** What edges name the node by: its ID, or `#1`, `#2`... for a hidden unit (never its ID). */
  key: string
  /** The unit's ID; null when the caller may not read the unit. */
  id: string | null
  /** Null when the caller may not read the unit, or when no such unit exists (yet). */
  status: UnitStatus['status'] | null
  /** The caller may not read the unit: nothing of it is told but that it is there. */
  hidden: boolean
  /** 0 for the unit asked about, -n for n edges upstream of it, n for n edges downstream. */
  level: number
}

/** The edges from one unit into another, as one line of the drawing. */
export interface NeighbourEdge {
  /** The upstream node's key. */
  from: string
  /** The downstream node's key. */
  to: string
  /**
   * The most urgent state of the edges: `pending` before `unknown` before `ok`. An edge into a
   * hidden unit is `unknown`: what it acknowledged is in that unit's record.
   */
  state: EdgeStatus['state']
  /** The outputs the edges follow, by name; empty when they follow the whole state. */
  outputs: string[]
}

export interface Neighbourhood {
  focus: string
  /** By level, the readable units of a level by ID, then its hidden ones. */
  nodes: NeighbourNode[]
  edges: NeighbourEdge[]
  /** Units were left out to keep to the limit. */
  truncated: boolean
}

export interface NeighbourhoodOptions {
  /** How many edges away from the unit to go, each way: 2 unless given, at most 4. */
  depth?: number
  /** How many units to show in all, the unit itself among them: 100 unless given, at most 1000. */
  limit?: number
}

const URGENCY: Record<EdgeStatus['state'], number> = { pending: 2, unknown: 1, ok: 0 }

/**
 * The units around `id`: upstream through the edges in the records, downstream through the
 * consumer marks (each checked against the consumer's record, since a mark may outlive its edge),
 * level by level up to `depth`, with their statuses and the edges between them. A unit the
 * caller may not read is kept as a hidden node without its ID, and the walk does not go past it:
 * its own edges are in its record, which the caller may not read.
 *
 * @throws InvalidRequestError (a bad depth or limit), UnitNotFoundError, ForbiddenError
 */
export async function readNeighbourhood(
  from: { kernel: Kernel; graph: GraphCache },
  principal: Principal,
  id: UnitId,
  options: NeighbourhoodOptions = {},
): Promise<Neighbourhood> {
  const { kernel } = from
  await demand(kernel.authorizer, principal, 'unit:read', id)
  const depth = bounded('depth', options.depth ?? DEFAULT_DEPTH, MAX_DEPTH)
  const limit = bounded('limit', options.limit ?? DEFAULT_LIMIT, MAX_LIMIT)
  const nodes = new GraphNodes(kernel.records, from.graph)
  await nodes.loadUpstream([id])
  if (nodes.get(id) === undefined) throw new UnitNotFoundError(id)

  const levels = new Map<string, number>([[id, 0]])
  const hidden = new Set<string>()
  let truncated = false
  /** Takes `unit` in at `level`; true when it is new and readable, so the walk goes on from it. */
  const admit = async (unit: string, level: number): Promise<boolean> => {
    if (levels.has(unit)) return false
    if (levels.size >= limit) {
      truncated = true
      return false
    }
    levels.set(unit, level)
    if (await kernel.authorizer.can(principal, 'unit:read', unit as UnitId)) return true
    hidden.add(unit)
    return false
  }

  let frontier: string[] = [id]
  for (let level = 1; level <= depth && frontier.length > 0; level += 1) {
    const next: string[] = []
    for (const unit of frontier) {
      const upstreams = new Set((nodes.get(unit)?.dependencies ?? []).map((edge) => edge.from))
      for (const upstream of [...upstreams].sort()) {
        if (await admit(upstream, -level)) next.push(upstream)
      }
    }
    frontier = next
  }

  // Edges into hidden units are known only from the walk: their records are not the caller's.
  const intoHidden: [string, string][] = []
  frontier = [id]
  for (let level = 1; level <= depth && frontier.length > 0; level += 1) {
    const pairs = await consumersOf(kernel.store, kernel.records, frontier)
    pairs.sort(([a, x], [b, y]) => compare(`${a}\n${x}`, `${b}\n${y}`))
    const next: string[] = []
    for (const [unit, consumer] of pairs) {
      if (await admit(consumer, level)) next.push(consumer)
      else if (hidden.has(consumer)) intoHidden.push([unit, consumer])
    }
    frontier = next
  }

  const readable = [...levels.keys()].filter((unit) => !hidden.has(unit))
  // Statuses need what lies upstream of the downstream units too.
  await nodes.loadUpstream(readable)
  const reader = nodes.reader()
  const keys = keysOf(levels, hidden)
  const edges: NeighbourEdge[] = []
  for (const unit of readable) {
    const into = new Map<string, NeighbourEdge>()
    for (const edge of reader.edges(unit)) {
      const upstream = keys.get(edge.from)
      if (upstream === undefined) continue
      const shown = into.get(edge.from) ?? { from: upstream, to: unit, state: 'ok', outputs: [] }
      if (URGENCY[edge.state] > URGENCY[shown.state]) shown.state = edge.state
      if (edge.output !== undefined) shown.outputs.push(edge.output)
      into.set(edge.from, shown)
    }
    edges.push(...into.values())
  }
  for (const [unit, consumer] of intoHidden) {
    edges.push({ from: unit, to: keys.get(consumer) as string, state: 'unknown', outputs: [] })
  }

  const shown: NeighbourNode[] = [...levels].map(([unit, level]) =>
    hidden.has(unit)
      ? { key: keys.get(unit) as string, id: null, status: null, hidden: true, level }
      : {
          key: unit,
          id: unit,
          status: nodes.get(unit) === undefined ? null : reader.report(unit).status,
          hidden: false,
          level,
        },
  )
  // Sorting is stable: hidden units stay in the order the walk met them.
  shown.sort(
    (a, b) =>
      a.level - b.level ||
      Number(a.hidden) - Number(b.hidden) ||
      (a.hidden ? 0 : compare(a.key, b.key)),
  )
  return { focus: id, nodes: shown, edges, truncated }
}

/**
 * The key of each unit: its ID when readable; for a hidden one a number, by level and then the
 * order the walk met them in, so that the key tells nothing of the ID.
 */
function keysOf(levels: Map<string, number>, hidden: ReadonlySet<string>): Map<string, string> {
  const keys = new Map<string, string>()
  let count = 0
  for (const [unit] of [...levels].sort(([, x], [, y]) => x - y)) {
    if (!hidden.has(unit)) keys.set(unit, unit)
    else keys.set(unit, `#${(count += 1)}`)
  }
  return keys
}

function bounded(name: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new InvalidRequestError(`${name} must be a whole number from 1 to ${max}`)
  }
  return value
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
