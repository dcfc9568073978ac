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

  /**
   * Forgets what was worked out that a change of the units `changed` may alter: whether each of
   * them and `consumers` (whose edges compare their nodes) is red, and the red units upstream of
   * `downstream` (every unit downstream of them, and they themselves).
   */
  forget(changed: Iterable<string>, downstream: Iterable<string>): void {
    for (const id of changed) this.#red.delete(id)
    for (const id of downstream) this.#frontier.delete(id)
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
      if (shown.state === 'unknown' && upstream?.clientEncrypted === true) {
        shown.reason = 'client_encrypted'
      }
      return shown
    })
  }

  #isRed(id: string): boolean {
    let red = this.#red.get(id)
    if (red === undefined) {
      red = false
      for (const edge of this.#graph.get(id)?.dependencies ?? []) {
        const digest = digestOf(this.#graph.get(edge.from), edge.output)
        if (digest !== null && digest !== edge.ack) {
          red = true
          break
        }
      }
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
      const dependencies = this.#graph.get(top.id)?.dependencies ?? []
      if (!top.expanded) {
        if (open.has(top.id)) continue
        open.add(top.id)
        stack.push({ id: top.id, expanded: true })
        for (const { from } of dependencies) {
          if (!this.#frontier.has(from)) stack.push({ id: from, expanded: false })
        }
        continue
      }
      // Most units have no red unit upstream: they share one empty set.
      let frontier: Set<string> | undefined
      for (const { from } of dependencies) {
        if (this.#isRed(from)) (frontier ??= new Set()).add(from)
        else {
          const above = this.#frontier.get(from) ?? NONE
          if (above.size > 0) for (const red of above) (frontier ??= new Set()).add(red)
        }
      }
      this.#frontier.set(top.id, frontier ?? NONE)
    }
    return this.#frontier.get(id) ?? NONE
  }
}

const NONE: ReadonlySet<string> = new Set()
