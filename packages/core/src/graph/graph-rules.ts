import { DependencyCycleError } from '../errors'
import { shortDigest } from '../state/canonical-json'
import { outputMap, outputNamed } from '../state/outputs'
import type { Ack, UnitRecord } from '../units/unit-record'
import type { Dependency } from '../units/requests'
import type { EdgeStatus, UnitStatus } from '../wire'
import type { GraphDraft, GraphReader } from './graph-draft'
import { edgeKey, type GraphEdge, type GraphUnit } from './graph-record'

/**
 * The rules of dependencies and status (DESIGN section 7). The changing ones work on a draft of
 * the graph; the reading ones never change the record they are given.
 */

/** The upstream value an edge compares: a digest, or null when it is unknown. */
export function digestOf(
  upstream: GraphUnit | undefined,
  output: string | undefined,
): string | null {
  if (upstream?.created == null || upstream.version === null) return null
  if (output === undefined) return upstream.state
  if (upstream.outputs === null) return null
  return outputNamed(upstream.outputs, output) ?? null
}

/** What a write of `id` acknowledges: the digest each of its edges sees now, or undefined. */
export function acksFor(graph: GraphReader, id: string): Ack[] | undefined {
  const entry = graph.get(id)
  if (entry === undefined || entry.dependencies.length === 0) return undefined
  return entry.dependencies.map((edge) => ({
    from: edge.from,
    ...(edge.output === undefined ? {} : { output: edge.output }),
    digest: digestOf(graph.get(edge.from), edge.output),
  }))
}

/**
 * Brings the graph's entry for `id` in step with its unit record (undefined: the unit is gone).
 * A step from an older life of the ID, or an older version, than the graph already holds is
 * ignored, so steps may arrive in any order. Units outside the graph are left out of it.
 *
 * @returns the units that may no longer take part in any edge, for `prune`
 */
export function syncUnit(
  draft: GraphDraft,
  id: string,
  record: UnitRecord | undefined,
  now: string,
): string[] {
  const entry = draft.get(id)
  if (entry === undefined) return []
  let next: GraphUnit
  if (record === undefined) {
    if (entry.created === null) return []
    next = { ...ABSENT, removed: now, dependencies: [] }
  } else {
    if (entry.removed !== null && record.created <= entry.removed) return []
    if (entry.created !== null && record.created < entry.created) return []
    const sameLife = entry.created === record.created
    const current = record.current
    const known = entry.version?.timestamp ?? ''
    const newer = !sameLife || (current?.timestamp ?? '') > known
    if (sameLife && !newer && (current?.timestamp ?? '') !== known) return []
    next = {
      created: record.created,
      removed: null,
      version: current === null ? null : { timestamp: current.timestamp, serial: current.serial },
      state: current?.serial == null ? null : shortDigest(current.sha256),
      outputs: consumedDigests(draft, id, current?.output_digests ?? null),
      // A new life of the ID starts without the dependencies of the old one.
      dependencies: (sameLife || entry.created === null ? entry.dependencies : []).map((edge) => ({
        ...edge,
      })),
    }
    if (newer && current?.acks !== undefined) acknowledge(next.dependencies, current.acks)
  }
  if (JSON.stringify(next) === JSON.stringify(entry)) return []
  const dropped = entry.dependencies.filter(
    (edge) => !next.dependencies.some((kept) => edgeKey(kept) === edgeKey(edge)),
  )
  draft.put(id, next)
  refreshSince(draft, id)
  return [id, ...dropped.map((edge) => edge.from)]
}

/**
 * Replaces the dependencies of `id`. Edges it already had keep what they acknowledged; new ones
 * count as acknowledged now, so they turn pending only when the upstream changes afterwards.
 * Everything is checked before anything is changed.
 *
 * @param records the unit records of `id` and of every upstream named, read just before
 * @throws DependencyCycleError when the edges would close a cycle
 */
export function setDependencies(
  draft: GraphDraft,
  id: string,
  dependencies: readonly Dependency[],
  records: ReadonlyMap<string, UnitRecord | undefined>,
  now: string,
): void {
  const upstreams = new Set(dependencies.map((dependency) => dependency.from))
  const cycle = findCycle(draft, id, upstreams)
  if (cycle !== undefined) throw new DependencyCycleError(cycle)
  const loose = ensure(draft, id, records.get(id), now)
  const before = draft.get(id)?.dependencies ?? []
  const previous = new Map(before.map((edge) => [edgeKey(edge), edge]))
  const fresh = new Set<string>()
  const edges = dependencies.map((dependency): GraphEdge => {
    const kept = previous.get(edgeKey(dependency))
    if (kept !== undefined) return { ...kept }
    fresh.add(edgeKey(dependency))
    return { ...dependency, ack: null, since: null }
  })
  draft.setDependencies(id, edges)
  // Each upstream's entry now carries the digests of the outputs consumed from it.
  for (const from of upstreams) loose.push(...ensure(draft, from, records.get(from), now))
  const entry = draft.edit(id)
  for (const edge of entry?.dependencies ?? []) {
    if (fresh.has(edgeKey(edge))) edge.ack = digestOf(draft.get(edge.from), edge.output)
  }
  refreshSince(draft, id)
  prune(draft, [...loose, id, ...before.map((edge) => edge.from)])
}

/** Answers status questions about one graph, remembering what it has worked out. */
export class StatusReader {
  readonly #graph: GraphReader
  readonly #red = new Map<string, boolean>()
  readonly #frontier = new Map<string, ReadonlySet<string>>()

  constructor(graph: GraphReader) {
    this.#graph = graph
  }

  report(id: string): UnitStatus {
    const edges = this.edges(id)
    const red = edges.some((edge) => edge.state === 'pending')
    const redUpstream = [...this.#redUpstream(id)].sort()
    return {
      id,
      status: red ? 'red' : redUpstream.length > 0 ? 'yellow' : 'green',
      edges,
      red_upstream: redUpstream,
    }
  }

  edges(id: string): EdgeStatus[] {
    const entry = this.#graph.get(id)
    if (entry === undefined) return []
    return entry.dependencies.map((edge) => {
      const upstream = this.#graph.get(edge.from)
      const digest = digestOf(upstream, edge.output)
      const shown: EdgeStatus = {
        from: edge.from,
        ...(edge.output === undefined ? {} : { output: edge.output }),
        state: digest === null ? 'unknown' : digest === edge.ack ? 'ok' : 'pending',
      }
      if (shown.state === 'pending') {
        const since = edge.since ?? upstream?.version ?? null
        if (since !== null) shown.since = since
      }
      return shown
    })
  }

  #isRed(id: string): boolean {
    let red = this.#red.get(id)
    if (red === undefined) {
      red = this.edges(id).some((edge) => edge.state === 'pending')
      this.#red.set(id, red)
    }
    return red
  }

  /**
   * The red units upstream of `id` reached without passing another red unit, worked out for every
   * unit upstream on the way (without recursion: chains may be thousands of units long).
   */
  #redUpstream(id: string): ReadonlySet<string> {
    const stack: { id: string; expanded: boolean }[] = [{ id, expanded: false }]
    const open = new Set<string>()
    while (stack.length > 0) {
      const top = stack.pop() as { id: string; expanded: boolean }
      if (this.#frontier.has(top.id)) continue
      const upstreams = this.#upstreams(top.id)
      if (!top.expanded) {
        if (open.has(top.id)) continue
        open.add(top.id)
        stack.push({ id: top.id, expanded: true })
        for (const upstream of upstreams) {
          if (!this.#frontier.has(upstream)) stack.push({ id: upstream, expanded: false })
        }
        continue
      }
      const frontier = new Set<string>()
      for (const upstream of upstreams) {
        if (this.#isRed(upstream)) frontier.add(upstream)
        else for (const red of this.#frontier.get(upstream) ?? []) frontier.add(red)
      }
      this.#frontier.set(top.id, frontier)
    }
    return this.#frontier.get(id) ?? new Set()
  }

  #upstreams(id: string): Set<string> {
    return new Set(this.#graph.get(id)?.dependencies.map((edge) => edge.from) ?? [])
  }
}

const ABSENT: GraphUnit = {
  created: null,
  removed: null,
  version: null,
  state: null,
  outputs: null,
  dependencies: [],
}

/** The entry for `id`, made from its record when the graph has none yet, and brought in step. */
function ensure(
  draft: GraphDraft,
  id: string,
  record: UnitRecord | undefined,
  now: string,
): string[] {
  if (draft.get(id) === undefined) draft.put(id, { ...ABSENT, dependencies: [] })
  // Also takes in the digests of outputs newly consumed when the version is the same.
  return syncUnit(draft, id, record, now)
}

/** Drops those of `ids` that no edge touches any more. */
export function prune(draft: GraphDraft, ids: readonly string[]): void {
  for (const id of new Set(ids)) {
    const entry = draft.get(id)
    if (entry?.dependencies.length === 0 && draft.consumersOf(id).size === 0) draft.remove(id)
  }
}

/** The digests of the outputs of `id` that some edge consumes. */
function consumedDigests(
  draft: GraphDraft,
  id: string,
  digests: Record<string, string> | null,
): Record<string, string> | null {
  if (digests === null) return null
  const consumed = outputMap<string>()
  for (const downstream of draft.consumersOf(id)) {
    for (const edge of draft.get(downstream)?.dependencies ?? []) {
      if (edge.from !== id || edge.output === undefined) continue
      const digest = outputNamed(digests, edge.output)
      if (digest !== undefined) consumed[edge.output] = digest
    }
  }
  return consumed
}

function acknowledge(edges: GraphEdge[], acks: readonly Ack[]): void {
  const seen = new Map(acks.map((ack) => [edgeKey(ack), ack.digest]))
  for (const edge of edges) {
    const digest = seen.get(edgeKey(edge))
    // An edge set after the write began was not seen by it, and keeps what it had.
    if (digest !== undefined) edge.ack = digest
  }
}

/** Keeps `since` right on the edges into `id` and out of it after either end changed. */
function refreshSince(draft: GraphDraft, id: string): void {
  for (const downstream of new Set([id, ...draft.consumersOf(id)])) {
    const edges = draft.get(downstream)?.dependencies ?? []
    const since = edges.map((edge) => {
      if (downstream !== id && edge.from !== id) return edge.since
      const upstream = draft.get(edge.from)
      const digest = digestOf(upstream, edge.output)
      if (digest === null || digest === edge.ack) return null
      return edge.since ?? upstream?.version ?? null
    })
    if (since.every((value, index) => value === edges[index]?.since)) continue
    const entry = draft.edit(downstream)
    entry?.dependencies.forEach((edge, index) => (edge.since = since[index] ?? null))
  }
}

/**
 * The cycle that giving `id` these upstreams would close, if any: each unit feeding the next, `id`
 * first and last. The graph has no cycle now, so any new one runs from `id` down to an upstream.
 */
function findCycle(
  draft: GraphDraft,
  id: string,
  upstreams: ReadonlySet<string>,
): string[] | undefined {
  if (upstreams.has(id)) return [id, id]
  const parent = new Map<string, string>()
  const stack = [id]
  const seen = new Set([id])
  while (stack.length > 0) {
    const unit = stack.pop() as string
    for (const next of draft.consumersOf(unit)) {
      if (seen.has(next)) continue
      seen.add(next)
      parent.set(next, unit)
      if (upstreams.has(next)) {
        const path = [next]
        for (let at = unit; at !== id; at = parent.get(at) ?? id) path.push(at)
        return [id, ...path.reverse(), id]
      }
      stack.push(next)
    }
  }
  return undefined
}
