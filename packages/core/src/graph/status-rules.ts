import type { Ack } from '../units/unit-record'
import type { EdgeStatus, UnitStatus } from '@cairn/contract'
import { digestOf, type GraphReader } from './graph-node'

/**
 * The rules of dependencies and status (DESIGN section 7) over nodes already read: what a write
 * acknowledges, and red, yellow or green with the reasons. They never change what they are given.
 */

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
      // `since` is worked out by the caller, which may read the upstream's earlier versions.
      if (shown.state === 'pending' && upstream?.version != null) shown.since = upstream.version
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
