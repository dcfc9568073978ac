import { createHash } from 'node:crypto'
import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import { DependencyCycleError, PreconditionError, UnitNotFoundError } from '../errors'
import { DependenciesSchema, type Dependency, type UnitStatus } from '@cairn/contract'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { listUnits, READ_CONCURRENCY, type Page, type PageOptions } from '../units/unit-listing'
import type { StoredEdge } from '../units/unit-record'
import type { Snapshot } from '../units/unit-record-store'
import { validate } from '../validation'
import { consumersOf, markConsumer, unmarkConsumer } from './consumer-marks'
import { GraphNodes, WholeGraph } from './graph-loader'
import { readNeighbourhood, type Neighbourhood, type NeighbourhoodOptions } from './neighbourhood'
import { digestOf, edgeKey, nodeOf, type GraphNode } from './graph-node'
import { StatusReader } from './graph-rules'
import type { SinceFinder } from './since'

/** How far a cycle search goes, record by record, before it reads the whole graph instead. */
const SEARCH_UNITS = 512
const SEARCH_LEVELS = 16
import type { Kernel } from '../kernel'

/** A unit's dependencies with the tag that `If-Match` compares. */
export interface DependencySet {
  dependencies: Dependency[]
  /** Changes whenever the set does: a quoted hash, as an HTTP ETag. */
  etag: string
}

interface DependencyServiceOptions {
  kernel: Kernel
  since: SinceFinder
}

/**
 * Dependencies between units and the status they give (DESIGN section 7): declaring and reading
 * the edges of a unit, and red, yellow or green with the reasons. Edges live in the unit records
 * (see `graph-node.ts`); status reads the records of the units asked about and of what lies
 * upstream of them.
 */
export class DependencyService {
  readonly #kernel: Kernel
  readonly #since: SinceFinder
  readonly #wholeGraph: WholeGraph

  constructor(options: DependencyServiceOptions) {
    this.#kernel = options.kernel
    this.#since = options.since
    this.#wholeGraph = new WholeGraph(options.kernel.records)
  }

  async get(principal: Principal, id: UnitId): Promise<DependencySet> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const snapshot = await this.#kernel.records.read(id)
    if (snapshot === undefined) throw new UnitNotFoundError(id)
    return setOf(snapshot.record.dependencies ?? [])
  }

  /**
   * Replaces the dependencies of `id`. Needs `unit:write` on it and `unit:read` on each upstream;
   * the upstreams need not exist yet. Edges it already had keep what they acknowledged; new ones
   * count as acknowledged now, so they turn pending only when the upstream changes afterwards.
   *
   * A cycle is looked for before the write and again after it: two instances that each add one
   * half of a cycle at the same moment may both pass the first look, but the later of the two
   * writes is seen by at least one second look, which takes its own edges back and refuses.
   *
   * @throws InvalidRequestError, InvalidUnitIdError, UnitNotFoundError, DependencyCycleError,
   *   PreconditionError (`ifMatch` is not the current set's tag), ForbiddenError
   */
  async set(
    principal: Principal,
    id: UnitId,
    body: unknown,
    options: { ifMatch?: string } = {},
  ): Promise<DependencySet> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    const requested = parseDependencies(body)
    const upstreams = [...new Set(requested.map((dependency) => dependency.from as UnitId))]
    for (const upstream of upstreams) {
      await demand(this.#kernel.authorizer, principal, 'unit:read', upstream)
    }
    if ((await this.#kernel.records.read(id)) === undefined) throw new UnitNotFoundError(id)
    await this.#refuseCycle(id, upstreams)
    const found = await mapLimit(upstreams, READ_CONCURRENCY, (unit) =>
      this.#kernel.records.read(unit),
    )
    const nodes = new Map<string, GraphNode>()
    upstreams.forEach((unit, index) => {
      const snapshot = found[index]
      if (snapshot !== undefined) nodes.set(unit, nodeOf(snapshot.record))
    })
    // The marks go first, so that no edge is ever without its mark.
    await markConsumer(this.#kernel.store, id, upstreams)
    let before: StoredEdge[] = []
    let written: StoredEdge[] = []
    const result = await this.#kernel.records.update(id, (current) => {
      if (current === undefined) throw new UnitNotFoundError(id)
      before = current.record.dependencies ?? []
      const set = setOf(before)
      if (options.ifMatch !== undefined && !etagMatches(options.ifMatch, set.etag)) {
        throw new PreconditionError(
          `the dependencies of ${id} changed since they were read (now ${set.etag})`,
        )
      }
      const kept = new Map(before.map((edge) => [edgeKey(edge), edge]))
      written = requested.map(
        (dependency): StoredEdge =>
          kept.get(edgeKey(dependency)) ?? {
            ...dependency,
            ack: digestOf(nodes.get(dependency.from), dependency.output),
          },
      )
      return Promise.resolve({
        put: { ...current.record, dependencies: written },
        result: setOf(written),
      })
    })
    try {
      await this.#refuseCycle(id, upstreams)
    } catch (error) {
      await this.#kernel.records.update(id, (current) => {
        const now = current?.record.dependencies ?? []
        if (current === undefined || setOf(now).etag !== result.etag) {
          return Promise.resolve({ keep: true as const, result: undefined })
        }
        return Promise.resolve({
          put: { ...current.record, dependencies: before },
          result: undefined,
        })
      })
      throw error
    }
    await this.#unmarkDropped(id, before, written)
    return result
  }

  /**
   * Removes the consumer marks of upstreams the set no longer names. A declaration elsewhere may
   * have named one again meanwhile, so the marks of what the record names now are put back.
   */
  async #unmarkDropped(
    id: UnitId,
    before: readonly StoredEdge[],
    written: readonly StoredEdge[],
  ): Promise<void> {
    const kept = new Set(written.map((edge) => edge.from))
    const dropped = [...new Set(before.map((edge) => edge.from))].filter((unit) => !kept.has(unit))
    if (dropped.length === 0) return
    await unmarkConsumer(this.#kernel.store, id, dropped)
    const now = (await this.#kernel.records.read(id))?.record.dependencies ?? []
    const named = new Set(now.map((edge) => edge.from))
    await markConsumer(
      this.#kernel.store,
      id,
      dropped.filter((unit) => named.has(unit)),
    )
  }

  /** @throws UnitNotFoundError, ForbiddenError */
  async status(principal: Principal, id: UnitId): Promise<UnitStatus> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const nodes = new GraphNodes(this.#kernel.records, this.#wholeGraph)
    await nodes.loadUpstream([id])
    if (nodes.get(id) === undefined) throw new UnitNotFoundError(id)
    const [report] = await this.#withSince(nodes, [new StatusReader(nodes).report(id)])
    return (await this.#hideUnreadable(principal, [report as UnitStatus]))[0] as UnitStatus
  }

  /**
   * The statuses of the given units that exist and that the caller may read, from one reading of
   * the graph (a page of units in a list shares its upstream units and its whole-graph read).
   */
  async statusesOf(principal: Principal, ids: readonly UnitId[]): Promise<UnitStatus[]> {
    const reports = await this.#reportAll(await this.#readable(principal, [...new Set(ids)]))
    return this.#hideUnreadable(principal, reports)
  }

  /** The status of every unit under `prefix` that the caller may read, one page at a time. */
  async statuses(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<UnitStatus>> {
    const page = await listUnits(this.#kernel.records, options)
    const ids = page.items.map((snapshot) => snapshot.record.id as UnitId)
    const items = await this.#reportAll(await this.#readable(principal, ids), page.items)
    return { items: await this.#hideUnreadable(principal, items), nextCursor: page.nextCursor }
  }

  /**
   * The reports without what the caller may not read of other units: the red units upstream
   * that they may not read are counted (`red_upstream_hidden`) instead of named, and an edge from
   * one keeps its `from` (the caller's unit names it) but not the upstream version it waits on.
   */
  async #hideUnreadable(principal: Principal, reports: UnitStatus[]): Promise<UnitStatus[]> {
    const others = new Set<string>()
    for (const report of reports) {
      for (const upstream of report.red_upstream) others.add(upstream)
      for (const edge of report.edges) if (edge.since !== undefined) others.add(edge.from)
    }
    if (others.size === 0) return reports
    const hidden = new Set<string>()
    await mapLimit([...others], READ_CONCURRENCY, async (id) => {
      if (!(await this.#kernel.authorizer.can(principal, 'unit:read', id as UnitId))) {
        hidden.add(id)
      }
    })
    if (hidden.size === 0) return reports
    return reports.map((report) => {
      const named = report.red_upstream.filter((upstream) => !hidden.has(upstream))
      const count = report.red_upstream.length - named.length
      return {
        ...report,
        edges: report.edges.map((edge) => {
          if (edge.since === undefined || !hidden.has(edge.from)) return edge
          const { since: _since, ...rest } = edge
          return rest
        }),
        red_upstream: named,
        ...(count === 0 ? {} : { red_upstream_hidden: count }),
      }
    })
  }

  /** The units of `ids` the caller may read, in their order. */
  async #readable(principal: Principal, ids: readonly UnitId[]): Promise<UnitId[]> {
    const allowed = await mapLimit(ids, READ_CONCURRENCY, async (id) =>
      (await this.#kernel.authorizer.can(principal, 'unit:read', id)) ? id : undefined,
    )
    return allowed.filter((id): id is UnitId => id !== undefined)
  }

  /**
   * The statuses of the units of `ids` that exist, from one reading of the graph that starts from
   * the records already read (`known`).
   */
  async #reportAll(ids: readonly UnitId[], known: readonly Snapshot[] = []): Promise<UnitStatus[]> {
    if (ids.length === 0) return []
    const nodes = new GraphNodes(this.#kernel.records, this.#wholeGraph)
    nodes.add(known)
    await nodes.loadUpstream(ids)
    const reader = new StatusReader(nodes)
    return this.#withSince(
      nodes,
      ids.filter((id) => nodes.get(id) !== undefined).map((id) => reader.report(id)),
    )
  }

  /**
   * The units around `id`, upstream and downstream up to `depth` edges away, with their statuses
   * and the edges between them, for a drawing of the graph. Needs `unit:read` on `id`; the units
   * around it that the caller may not read are hidden nodes, without their IDs (`neighbourhood.ts`).
   *
   * @throws InvalidRequestError (a bad depth or limit), UnitNotFoundError, ForbiddenError
   */
  neighbourhood(
    principal: Principal,
    id: UnitId,
    options: NeighbourhoodOptions = {},
  ): Promise<Neighbourhood> {
    return readNeighbourhood(
      { kernel: this.#kernel, wholeGraph: this.#wholeGraph },
      principal,
      id,
      options,
    )
  }

  /**
   * Refuses edges from `upstreams` into `id` that would close a cycle: one exists when `id` feeds
   * one of them, directly or through others. The search runs from both ends at once, a level at a
   * time, always on the side with fewer units to visit: downstream from `id` through the consumer
   * marks (each checked against the consumer's record), upstream from the new upstreams through
   * their records. When either side runs out, there is no cycle; so a new unit, which nothing
   * consumes yet, costs one listing. A search that would pass `SEARCH_UNITS` units or
   * `SEARCH_LEVELS` levels reads the whole graph instead and searches it in memory.
   *
   * @throws DependencyCycleError naming the cycle, `id` first and last
   */
  async #refuseCycle(id: UnitId, upstreams: readonly UnitId[]): Promise<void> {
    if (upstreams.includes(id)) throw new DependencyCycleError([id, id])
    if (upstreams.length === 0) return
    const found = await this.#search(id, upstreams)
    if (found === 'too far') await this.#refuseCycleInWhole(id, upstreams)
    else if (found !== undefined) throw new DependencyCycleError(found)
  }

  /** The cycle that edges from `upstreams` into `id` would close, undefined, or 'too far'. */
  async #search(
    id: UnitId,
    upstreams: readonly UnitId[],
  ): Promise<string[] | undefined | 'too far'> {
    // Downstream of id: each unit by the one it consumes on the way. Upstream of the new
    // upstreams: each unit by the one it feeds on the way (undefined for the upstreams).
    const down = new Map<string, string | undefined>([[id, undefined]])
    const up = new Map<string, string | undefined>(upstreams.map((unit) => [unit, undefined]))
    let downFrontier: string[] = [id]
    let upFrontier: string[] = [...upstreams]
    const cycleThrough = (meeting: string): string[] => {
      const toMeeting: string[] = []
      for (let at: string | undefined = meeting; at !== undefined; at = down.get(at)) {
        toMeeting.push(at)
      }
      const fromMeeting: string[] = []
      for (let at = up.get(meeting); at !== undefined; at = up.get(at)) fromMeeting.push(at)
      return [...toMeeting.reverse(), ...fromMeeting, id]
    }
    for (const unit of upstreams) if (down.has(unit)) return cycleThrough(unit)
    for (let level = 0; downFrontier.length > 0 && upFrontier.length > 0; level += 1) {
      if (level >= SEARCH_LEVELS || down.size + up.size > SEARCH_UNITS) return 'too far'
      if (downFrontier.length <= upFrontier.length) {
        const next: string[] = []
        for (const [unit, consumer] of await consumersOf(
          this.#kernel.store,
          this.#kernel.records,
          downFrontier,
        )) {
          if (down.has(consumer)) continue
          down.set(consumer, unit)
          if (up.has(consumer)) return cycleThrough(consumer)
          next.push(consumer)
        }
        downFrontier = next
      } else {
        const records = await mapLimit(upFrontier, READ_CONCURRENCY, (unit) =>
          this.#kernel.records.read(unit as UnitId),
        )
        const next: string[] = []
        for (const [index, unit] of upFrontier.entries()) {
          for (const edge of records[index]?.record.dependencies ?? []) {
            if (up.has(edge.from)) continue
            up.set(edge.from, unit)
            if (down.has(edge.from)) return cycleThrough(edge.from)
            next.push(edge.from)
          }
        }
        upFrontier = next
      }
    }
    return undefined
  }

  /** The cycle check on the whole graph, read from listings: upstream of each new upstream. */
  async #refuseCycleInWhole(id: UnitId, upstreams: readonly UnitId[]): Promise<void> {
    const nodes = new GraphNodes(this.#kernel.records, this.#wholeGraph)
    await nodes.loadWhole()
    // Each unit reached, by the unit downstream of it that it was reached from.
    const reachedFrom = new Map<string, string>()
    const stack: string[] = [...upstreams]
    const seen = new Set<string>(upstreams)
    while (stack.length > 0) {
      const unit = stack.pop() as string
      for (const edge of nodes.get(unit)?.dependencies ?? []) {
        if (seen.has(edge.from)) continue
        seen.add(edge.from)
        reachedFrom.set(edge.from, unit)
        if (edge.from === id) {
          // id feeds the unit it was reached from, which feeds the next, up to an upstream.
          const cycle = [id as string]
          for (let at = unit; ; at = reachedFrom.get(at) as string) {
            cycle.push(at)
            if (!reachedFrom.has(at)) break
          }
          throw new DependencyCycleError([...cycle, id])
        }
        stack.push(edge.from)
      }
    }
  }

  /** Sets `since` on every pending edge of the reports, from the upstreams' earlier versions. */
  async #withSince(nodes: GraphNodes, reports: UnitStatus[]): Promise<UnitStatus[]> {
    const pending: { edge: UnitStatus['edges'][number]; ack: string | null }[] = []
    for (const report of reports) {
      const node = nodes.get(report.id)
      for (const edge of report.edges) {
        if (edge.state !== 'pending') continue
        const stored = node?.dependencies.find((kept) => edgeKey(kept) === edgeKey(edge))
        if (stored !== undefined) pending.push({ edge, ack: stored.ack })
      }
    }
    await mapLimit(pending, READ_CONCURRENCY, async ({ edge, ack }) => {
      const upstream = nodes.get(edge.from)
      if (upstream === undefined) return
      const since = await this.#since.since(edge.from, upstream, {
        ack,
        ...(edge.output === undefined ? {} : { output: edge.output }),
      })
      if (since !== null) edge.since = since
    })
    return reports
  }
}

/** Checks a `{"dependencies": [...]}` body: unit IDs valid, no repeats kept, sorted. */
function parseDependencies(body: unknown): Dependency[] {
  const { dependencies } = validate(DependenciesSchema, body)
  const unique = new Map<string, Dependency>()
  for (const dependency of dependencies) {
    const from = parseUnitId(dependency.from)
    const edge = dependency.output === undefined ? { from } : { from, output: dependency.output }
    unique.set(edgeKey(edge), edge)
  }
  return sorted([...unique.values()])
}

function setOf(edges: readonly Dependency[]): DependencySet {
  const dependencies = sorted(
    edges.map((edge) =>
      edge.output === undefined ? { from: edge.from } : { from: edge.from, output: edge.output },
    ),
  )
  const hash = createHash('sha256').update(JSON.stringify(dependencies)).digest('base64url')
  return { dependencies, etag: `"${hash.slice(0, 27)}"` }
}

function sorted(dependencies: Dependency[]): Dependency[] {
  return dependencies.sort((a, b) => {
    const x = edgeKey(a)
    const y = edgeKey(b)
    return x < y ? -1 : x > y ? 1 : 0
  })
}

/** An `If-Match` value: `*`, or a list of entity tags (weak ones compare by their opaque part). */
function etagMatches(header: string, etag: string): boolean {
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === etag)
}
