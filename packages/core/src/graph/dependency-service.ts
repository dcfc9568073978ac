import type { UnitStatus } from '@cairn/contract'
import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import { PreconditionError, UnitNotFoundError } from '../errors'
import type { Kernel } from '../kernel'
import type { UnitId } from '../units/unit-id'
import { listUnits, READ_CONCURRENCY, type Page, type PageOptions } from '../units/unit-listing'
import type { StoredEdge } from '../units/unit-record'
import type { Snapshot } from '../units/unit-record-store'
import { markConsumer, unmarkConsumer } from './consumer-marks'
import { CycleSearch } from './cycle-search'
import { parseDependencies, setOf, type DependencySet } from './dependency-set'
import type { GraphCache } from './graph-cache'
import { GraphNodes } from './graph-loader'
import { digestOf, edgeKey, nodeOf, type GraphNode } from './graph-node'
import { readNeighbourhood, type Neighbourhood, type NeighbourhoodOptions } from './neighbourhood'
import type { SinceFinder } from './since'
import { hideUnreadable, readableUnits } from './status-visibility'

interface DependencyServiceOptions {
  kernel: Kernel
  /** This instance's copy of the whole graph, shared with the status watch. */
  graph: GraphCache
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
  readonly #graph: GraphCache
  readonly #cycles: CycleSearch

  constructor(options: DependencyServiceOptions) {
    this.#kernel = options.kernel
    this.#since = options.since
    this.#graph = options.graph
    this.#cycles = new CycleSearch(options.kernel.store, options.kernel.records, this.#graph)
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
   * `ifMatch` says whether the current set's tag is the one the caller read (HTTP's `If-Match`,
   * whose grammar is the server's).
   *
   * @throws InvalidRequestError, InvalidUnitIdError, UnitNotFoundError, DependencyCycleError,
   *   PreconditionError (`ifMatch` refused the current set's tag), ForbiddenError
   */
  async set(
    principal: Principal,
    id: UnitId,
    body: unknown,
    options: { ifMatch?: (etag: string) => boolean } = {},
  ): Promise<DependencySet> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    const requested = parseDependencies(body)
    const upstreams = [...new Set(requested.map((dependency) => dependency.from as UnitId))]
    for (const upstream of upstreams) {
      await demand(this.#kernel.authorizer, principal, 'unit:read', upstream)
    }
    if ((await this.#kernel.records.read(id)) === undefined) throw new UnitNotFoundError(id)
    await this.#cycles.refuse(id, upstreams)
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
      if (options.ifMatch !== undefined && !options.ifMatch(set.etag)) {
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
      await this.#cycles.refuse(id, upstreams)
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
    const nodes = new GraphNodes(this.#kernel.records, this.#graph)
    await nodes.loadUpstream([id])
    if (nodes.get(id) === undefined) throw new UnitNotFoundError(id)
    const [report] = await this.#withSince(nodes, [nodes.reader().report(id)])
    const [shown] = await hideUnreadable(this.#kernel.authorizer, principal, [report as UnitStatus])
    return shown as UnitStatus
  }

  /**
   * The statuses of the given units that exist and that the caller may read, from one reading of
   * the graph (a page of units in a list shares its upstream units and its whole-graph read).
   */
  async statusesOf(principal: Principal, ids: readonly UnitId[]): Promise<UnitStatus[]> {
    const { authorizer } = this.#kernel
    const readable = await readableUnits(authorizer, principal, [...new Set(ids)])
    return hideUnreadable(authorizer, principal, await this.#reportAll(readable))
  }

  /** The status of every unit under `prefix` that the caller may read, one page at a time. */
  async statuses(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<UnitStatus>> {
    const page = await listUnits(this.#kernel.records, options)
    const ids = page.items.map((snapshot) => snapshot.record.id as UnitId)
    const { authorizer } = this.#kernel
    const items = await this.#reportAll(await readableUnits(authorizer, principal, ids), page.items)
    return {
      items: await hideUnreadable(authorizer, principal, items),
      nextCursor: page.nextCursor,
    }
  }

  /**
   * The statuses of the units of `ids` that exist, from one reading of the graph that starts from
   * the records already read (`known`).
   */
  async #reportAll(ids: readonly UnitId[], known: readonly Snapshot[] = []): Promise<UnitStatus[]> {
    if (ids.length === 0) return []
    const nodes = new GraphNodes(this.#kernel.records, this.#graph)
    nodes.add(known)
    await nodes.loadUpstream(ids)
    const reader = nodes.reader()
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
    return readNeighbourhood({ kernel: this.#kernel, graph: this.#graph }, principal, id, options)
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
