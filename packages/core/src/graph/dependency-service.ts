import { createHash } from 'node:crypto'
import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import { DependencyCycleError, PreconditionError, UnitNotFoundError } from '../errors'
import { DependenciesSchema, type Dependency } from '../units/requests'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { listUnits, READ_CONCURRENCY, type Page, type PageOptions } from '../units/unit-listing'
import type { StoredEdge } from '../units/unit-record'
import type { UnitStatus } from '../wire'
import { validate } from '../validation'
import { GraphNodes } from './graph-loader'
import { digestOf, edgeKey, nodeOf, type GraphNode } from './graph-node'
import { StatusReader } from './graph-rules'
import type { SinceFinder } from './since'
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

  constructor(options: DependencyServiceOptions) {
    this.#kernel = options.kernel
    this.#since = options.since
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
    return result
  }

  /** @throws UnitNotFoundError, ForbiddenError */
  async status(principal: Principal, id: UnitId): Promise<UnitStatus> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    const nodes = new GraphNodes(this.#kernel.records)
    await nodes.loadUpstream([id])
    if (nodes.get(id) === undefined) throw new UnitNotFoundError(id)
    const [report] = await this.#withSince(nodes, [new StatusReader(nodes).report(id)])
    return report as UnitStatus
  }

  /** The status of every unit under `prefix` that the caller may read, one page at a time. */
  async statuses(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<UnitStatus>> {
    const page = await listUnits(this.#kernel.records, options)
    const allowed = await mapLimit(page.items, READ_CONCURRENCY, async (snapshot) =>
      (await this.#kernel.authorizer.can(principal, 'unit:read', snapshot.record.id as UnitId))
        ? snapshot.record.id
        : undefined,
    )
    const ids = allowed.filter((id): id is string => id !== undefined)
    if (ids.length === 0) return { items: [], nextCursor: page.nextCursor }
    const nodes = new GraphNodes(this.#kernel.records)
    nodes.add(page.items)
    await nodes.loadUpstream(ids)
    const reader = new StatusReader(nodes)
    const items = await this.#withSince(
      nodes,
      ids.map((id) => reader.report(id)),
    )
    return { items, nextCursor: page.nextCursor }
  }

  /**
   * Refuses edges from `upstreams` into `id` that would close a cycle: one exists when `id` lies
   * upstream of one of them. Reads what lies upstream of them, not the whole graph.
   *
   * @throws DependencyCycleError naming the cycle, `id` first and last
   */
  async #refuseCycle(id: UnitId, upstreams: readonly UnitId[]): Promise<void> {
    if (upstreams.includes(id)) throw new DependencyCycleError([id, id])
    const nodes = new GraphNodes(this.#kernel.records)
    await nodes.loadUpstream(upstreams)
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
