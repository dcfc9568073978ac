import { createHash } from 'node:crypto'
import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import { PreconditionError, UnitNotFoundError } from '../errors'
import { iso } from '../runtime/clock'
import { DependenciesSchema, type Dependency } from '../units/requests'
import { parseUnitId, type UnitId } from '../units/unit-id'
import { listUnitIds, READ_CONCURRENCY, type Page, type PageOptions } from '../units/unit-listing'
import type { UnitRecord } from '../units/unit-record'
import type { UnitStatus } from '../wire'
import { validate } from '../validation'
import type { DependencyGraph } from './dependency-graph'
import type { Graph } from './graph-draft'
import { edgeKey } from './graph-record'
import { setDependencies, StatusReader } from './graph-rules'
import type { Kernel } from '../kernel'

/** A unit's dependencies with the tag that `If-Match` compares. */
export interface DependencySet {
  dependencies: Dependency[]
  /** Changes whenever the set does: a quoted hash, as an HTTP ETag. */
  etag: string
}

interface DependencyServiceOptions {
  kernel: Kernel
  graph: DependencyGraph
}

/**
 * Dependencies between units and the status they give (DESIGN section 7): declaring and reading
 * the edges of a unit, and red, yellow or green with the reasons.
 */
export class DependencyService {
  readonly #kernel: Kernel
  readonly #graph: DependencyGraph

  constructor(options: DependencyServiceOptions) {
    this.#kernel = options.kernel
    this.#graph = options.graph
  }

  async get(principal: Principal, id: UnitId): Promise<DependencySet> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    await this.#exists(id)
    const graph = await this.#graph.read()
    return setOf(graph.get(id)?.dependencies ?? [])
  }

  /**
   * Replaces the dependencies of `id`. Needs `unit:write` on it and `unit:read` on each upstream;
   * the upstreams need not exist yet.
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
    const read = async (): Promise<Map<string, UnitRecord | undefined>> => {
      const found = await mapLimit([id, ...upstreams], READ_CONCURRENCY, async (unit) => {
        return [unit, (await this.#kernel.records.read(unit))?.record] as const
      })
      return new Map(found)
    }
    const records = await read()
    if (records.get(id) === undefined) throw new UnitNotFoundError(id)
    const result = await this.#graph.change(undefined, (draft) => {
      const current = setOf(draft.get(id)?.dependencies ?? [])
      if (options.ifMatch !== undefined && !etagMatches(options.ifMatch, current.etag)) {
        throw new PreconditionError(
          `the dependencies of ${id} changed since they were read (now ${current.etag})`,
        )
      }
      setDependencies(draft, id, requested, records, iso(this.#kernel.clock.now()))
      return setOf(draft.get(id)?.dependencies ?? [])
    })
    // A unit written (or deleted) while the records above were read may have taken its own graph
    // step before it was in the graph; stepping each again from a fresh read closes that gap.
    await Promise.all([id, ...upstreams].map((unit) => this.#graph.sync(unit)))
    return result
  }

  /** @throws UnitNotFoundError, ForbiddenError */
  async status(principal: Principal, id: UnitId): Promise<UnitStatus> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    await this.#exists(id)
    return readerOf(await this.#graph.readSettled()).report(id)
  }

  /** The status of every unit under `prefix` that the caller may read, one page at a time. */
  async statuses(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<UnitStatus>> {
    const page = await listUnitIds(this.#kernel.store, options)
    const allowed = await mapLimit(page.items, READ_CONCURRENCY, async (id) =>
      (await this.#kernel.authorizer.can(principal, 'unit:read', id)) ? id : undefined,
    )
    const ids = allowed.filter((id): id is UnitId => id !== undefined)
    if (ids.length === 0) return { items: [], nextCursor: page.nextCursor }
    const reader = readerOf(await this.#graph.readSettled())
    return { items: ids.map((id) => reader.report(id)), nextCursor: page.nextCursor }
  }

  async #exists(id: UnitId): Promise<void> {
    if ((await this.#kernel.records.read(id)) === undefined) throw new UnitNotFoundError(id)
  }
}

/**
 * One status reader per stored graph: a graph never changes, so what one request works out (which
 * units are red, which red units lie upstream of which) serves every later request on it.
 */
const readers = new WeakMap<Graph, StatusReader>()

function readerOf(graph: Graph): StatusReader {
  let reader = readers.get(graph)
  if (reader === undefined) readers.set(graph, (reader = new StatusReader(graph)))
  return reader
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
