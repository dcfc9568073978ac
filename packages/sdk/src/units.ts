import { everyItem, type AllQuery, type PageQuery } from './pages'
import {
  DependenciesSchema,
  HistoryListSchema,
  LockInfoSchema,
  OutputsSchema,
  UnitListSchema,
  UnitSchema,
  UnitDiffSchema,
  UnitStatusSchema,
  UnlockResponseSchema,
  VersionResourcesSchema,
  VersionListSchema,
  VersionSchema,
  type Dependency,
  type HistoryList,
  type LockInfo,
  type LockRequest,
  type Outputs,
  type Unit,
  type UnitDiff,
  type UnitList,
  type UnitStatus,
  type UnlockResponse,
  type Version,
  type VersionList,
  type VersionResources,
} from '@cairn/contract'
import { CairnApiError, CairnError } from './errors'
import * as v from 'valibot'
import { unitPath, type Transport } from './transport'

/** A downloaded state: the stream of its bytes and what the server says about it. */
export interface StateDownload {
  body: ReadableStream<Uint8Array>
  /** The size in bytes, from Content-Length. */
  size: number | undefined
  /** SHA-256 of the bytes, hex. */
  sha256: string | undefined
  /** MD5 of the bytes, hex. */
  md5: string | undefined
  /** The timestamp of the version downloaded. */
  version: string | undefined
}

/** A unit's dependencies, with the tag that makes a later replace conditional on them. */
export interface DependencySet {
  dependencies: Dependency[]
  /** The set's entity tag: pass it as `ifMatch` to replace only this set. */
  etag: string | undefined
}

/** Edges to add to and remove from a unit's dependencies. */
export interface DependencyChange {
  add?: Dependency[]
  remove?: Dependency[]
}

/** How often `changeDependencies` reads and tries again when another writer changed the set. */
const CHANGE_ATTEMPTS = 5

/** A state to upload: text, bytes, or a stream (never buffered). */
export type StateBody = string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>

/** The `/v1/units` API. Unit IDs are natural paths such as `team/app/prod`. */
export class UnitsApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** One page of units, in ID order. */
  list(query: PageQuery & { prefix?: string } = {}): Promise<UnitList> {
    return this.#transport.json('GET', '/v1/units', UnitListSchema, { query: { ...query } })
  }

  /** Every unit under a prefix, page after page. */
  listAll(query: AllQuery = {}): AsyncGenerator<Unit> {
    return everyItem(
      query,
      100,
      (page) => this.list(page),
      (page) => page.units,
    )
  }

  create(id: string, options: { tags?: string[] } = {}): Promise<Unit> {
    return this.#transport.json('POST', '/v1/units', UnitSchema, {
      body: { json: { id, ...options } },
    })
  }

  get(id: string): Promise<Unit> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}`, UnitSchema)
  }

  /** Deletes a unit with its versions; a locked one needs `force`. */
  async delete(id: string, options: { force?: boolean } = {}): Promise<void> {
    await this.#transport.send('DELETE', `/v1/units/${unitPath(id)}`, {
      query: flag('force', options.force),
    })
  }

  /** The current state, or the version written at `version` (its timestamp), as a stream. */
  async download(id: string, options: { version?: string } = {}): Promise<StateDownload> {
    const response = await this.#transport.send('GET', `/v1/units/${unitPath(id)}/download`, {
      query: { version: options.version },
    })
    if (response.body === null) throw new CairnError('the download answered no body')
    const body = bodyHolding(response, response.body)
    const length = response.headers.get('content-length')
    const md5 = response.headers.get('content-md5')
    const etag = response.headers.get('etag')
    return {
      body,
      size: length === null ? undefined : Number(length),
      sha256: etag === null ? undefined : etag.replaceAll('"', ''),
      md5: md5 === null ? undefined : hexOfBase64(md5),
      version: response.headers.get('x-cairn-version') ?? undefined,
    }
  }

  /** The current state, read whole, as text. */
  async downloadText(id: string): Promise<string> {
    const { body } = await this.download(id)
    return new Response(body).text()
  }

  /**
   * Stores a state as the unit's new version. While the unit is locked, name the lock with
   * `ifLockedBy`; `force` accepts a state that goes back in serial.
   */
  upload(
    id: string,
    state: StateBody,
    options: { ifLockedBy?: string; force?: boolean } = {},
  ): Promise<Version> {
    const body =
      typeof state === 'string' || state instanceof Uint8Array
        ? { bytes: state }
        : { stream: state }
    return this.#transport.json('POST', `/v1/units/${unitPath(id)}/upload`, VersionSchema, {
      body,
      query: { if_locked_by: options.ifLockedBy, ...flag('force', options.force) },
    })
  }

  /**
   * Appends a version imported from another store with its provenance (DESIGN section 16): the
   * unit is created when new; `md5` is the source's declared MD5, checked against the bytes.
   * Needs `unit:manage`. `@cairn/migrate` drives this for whole sources.
   */
  importVersion(
    id: string,
    state: StateBody,
    options: {
      importedFrom: string
      originalCreated?: string | null
      originalAuthor?: string | null
      md5?: string
      lockId?: string
    },
  ): Promise<Version> {
    const body =
      typeof state === 'string' || state instanceof Uint8Array
        ? { bytes: state }
        : { stream: state }
    return this.#transport.json('POST', `/v1/units/${unitPath(id)}/versions`, VersionSchema, {
      body,
      query: {
        imported_from: options.importedFrom,
        original_created: options.originalCreated ?? undefined,
        original_author: options.originalAuthor ?? undefined,
        md5: options.md5,
        lock_id: options.lockId,
      },
    })
  }

  /** Takes the unit's lock; fields left out are filled in (a new ID, you as `Who`). */
  lock(id: string, info: LockRequest = {}): Promise<LockInfo> {
    return this.#transport.json('POST', `/v1/units/${unitPath(id)}/lock`, LockInfoSchema, {
      body: { json: info },
    })
  }

  /**
   * Releases the lock with its ID, or any lock with `force`; a forced unlock keeps `reason` (at
   * most 500 characters) in the unit history.
   */
  unlock(
    id: string,
    options: { lockId?: string; force?: boolean; reason?: string } = {},
  ): Promise<UnlockResponse> {
    return this.#transport.json(
      'DELETE',
      `/v1/units/${unitPath(id)}/unlock`,
      UnlockResponseSchema,
      {
        body: {
          json: {
            ...(options.lockId === undefined ? {} : { ID: options.lockId }),
            ...(options.reason === undefined ? {} : { reason: options.reason }),
          },
        },
        query: flag('force', options.force),
      },
    )
  }

  /** One page of versions, newest first. */
  versions(id: string, query: PageQuery = {}): Promise<VersionList> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}/versions`, VersionListSchema, {
      query: { ...query },
    })
  }

  /** Copies the version written at `timestamp` forward as a new version. */
  restore(id: string, timestamp: string, options: { lockId?: string } = {}): Promise<Version> {
    return this.#transport.json('POST', `/v1/units/${unitPath(id)}/restore`, VersionSchema, {
      body: {
        json: { timestamp, ...(options.lockId === undefined ? {} : { lock_id: options.lockId }) },
      },
    })
  }

  /** Recorded events (forced unlocks), newest first. */
  history(id: string, query: PageQuery = {}): Promise<HistoryList> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}/history`, HistoryListSchema, {
      query: { ...query },
    })
  }

  /**
   * The top-level outputs of the current version, or of the one written at `version`: each with
   * its value, type and `sensitive` flag, and nothing else of the state (so `unit:outputs`
   * suffices). `outputs` is null when the state is not a Terraform state.
   */
  outputs(id: string, options: { version?: string } = {}): Promise<Outputs> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}/outputs`, OutputsSchema, {
      query: { version: options.version },
    })
  }

  /**
   * What the current version, or the one written at `version`, holds from its index: resource
   * instances (in the order the state lists them), modules, providers and outputs (names and
   * `sensitive` only). `indexed` is false, with the `reason`, when the state is not a readable
   * Terraform state. Without `limit`, every instance in one answer (the server streams it); with
   * it, a page, and `next_cursor` (null on the last) as `cursor` asks for the next.
   */
  resources(
    id: string,
    options: { version?: string; limit?: number; cursor?: string } = {},
  ): Promise<VersionResources> {
    const version = encodeURIComponent(options.version ?? 'current')
    const path = `/v1/units/${unitPath(id)}/versions/${version}/resources`
    return this.#transport.json('GET', path, VersionResourcesSchema, {
      query: { limit: options.limit, cursor: options.cursor },
    })
  }

  /**
   * What changed, by address, from the version written at `from` to the one written at `to`:
   * resources and outputs added, removed and changed, with `detail` each changed attribute and
   * output value too. `to` defaults to the current version, `from` to the version before `to`.
   * Without `limit`, the whole diff in one answer (with `detail`, the attributes of its first
   * 1,000 changed instances); with it, a page (`next_cursor`, and `everyDiffPage`). A version that
   * is not a readable Terraform state fails with `not_indexed` (422).
   */
  diff(
    id: string,
    options: { from?: string; to?: string; detail?: boolean; limit?: number; cursor?: string } = {},
  ): Promise<UnitDiff> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}/diff`, UnitDiffSchema, {
      query: {
        from: options.from,
        to: options.to,
        ...flag('detail', options.detail),
        limit: options.limit,
        cursor: options.cursor,
      },
    })
  }

  /**
   * Every page of a diff, `pageSize` changed instances at most each (1,000 by default, as many as
   * one answer gives the attributes of): the outputs come with the first.
   */
  async *everyDiffPage(
    id: string,
    options: { from?: string; to?: string; detail?: boolean; pageSize?: number } = {},
  ): AsyncGenerator<UnitDiff> {
    const { pageSize = DIFF_PAGE, ...query } = options
    let cursor: string | undefined
    do {
      const page = await this.diff(id, {
        ...query,
        limit: pageSize,
        ...(cursor === undefined ? {} : { cursor }),
      })
      yield page
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
  }

  /** Red, yellow or green, with each incoming edge's state and the red units upstream. */
  status(id: string): Promise<UnitStatus> {
    return this.#transport.json('GET', `/v1/units/${unitPath(id)}/status`, UnitStatusSchema)
  }

  /** The units `id` consumes: `{ from, output? }` each, `output` absent for the whole state. */
  async dependencies(id: string): Promise<DependencySet> {
    const response = await this.#transport.send('GET', `/v1/units/${unitPath(id)}/dependencies`)
    return dependencySet(response, `/v1/units/${id}/dependencies`)
  }

  /**
   * Replaces the units `id` consumes. With `ifMatch` (the `etag` of a set read before), only if
   * nobody changed the set since; otherwise a `CairnApiError` with code `precondition_failed`.
   * A cycle is refused with `DependencyCycleError`.
   */
  async setDependencies(
    id: string,
    dependencies: Dependency[],
    options: { ifMatch?: string } = {},
  ): Promise<DependencySet> {
    const response = await this.#transport.send('PUT', `/v1/units/${unitPath(id)}/dependencies`, {
      body: { json: { dependencies } },
      ...(options.ifMatch === undefined ? {} : { headers: { 'If-Match': options.ifMatch } }),
    })
    return dependencySet(response, `/v1/units/${id}/dependencies`)
  }

  /**
   * Adds and removes edges without losing a change someone else makes at the same time: reads the
   * set, replaces it on the condition that it is unchanged, and starts again if it was changed.
   */
  async changeDependencies(id: string, change: DependencyChange): Promise<DependencySet> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.dependencies(id)
      const removed = new Set((change.remove ?? []).map(edgeKey))
      const next = new Map<string, Dependency>()
      for (const edge of [...current.dependencies, ...(change.add ?? [])]) {
        if (!removed.has(edgeKey(edge))) next.set(edgeKey(edge), edge)
      }
      try {
        return await this.setDependencies(id, [...next.values()], {
          ...(current.etag === undefined ? {} : { ifMatch: current.etag }),
        })
      } catch (error) {
        const lost = error instanceof CairnApiError && error.code === 'precondition_failed'
        if (!lost || attempt === CHANGE_ATTEMPTS) throw error
      }
    }
  }
}

async function dependencySet(response: Response, path: string): Promise<DependencySet> {
  const result = v.safeParse(DependenciesSchema, await response.json().catch(() => undefined))
  if (!result.success) {
    throw new CairnError(`${path} answered a body this client does not understand`)
  }
  return {
    dependencies: result.output.dependencies,
    etag: response.headers.get('etag') ?? undefined,
  }
}

function edgeKey(edge: Dependency): string {
  return `${edge.from}\n${edge.output ?? ''}`
}

/** The most changed instances a detailed diff's answer gives the attributes of. */
const DIFF_PAGE = 1000

function flag(name: string, value: boolean | undefined): Record<string, string> {
  return value === true ? { [name]: 'true' } : {}
}

function hexOfBase64(text: string): string {
  const binary = atob(text)
  return Array.from(binary, (char) => char.charCodeAt(0).toString(16).padStart(2, '0')).join('')
}

/**
 * The body of `response`, as a stream that holds the response itself. Node's fetch cancels the
 * body of a response it has collected, so a body kept without its response (a download asked for
 * ahead of its reading) could end early and empty.
 */
function bodyHolding(
  response: Response,
  body: ReadableStream<Uint8Array>,
): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  // Let go once the body is read or cancelled; until then this stream keeps the response.
  let held: Response | undefined = response
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read()
      if (next.done || held === undefined) {
        held = undefined
        controller.close()
        return
      }
      controller.enqueue(next.value)
    },
    cancel(reason) {
      held = undefined
      return reader.cancel(reason)
    },
  })
}
