import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import {
  InvalidRequestError,
  LockConflictError,
  UnitExistsError,
  UnitNotFoundError,
} from '../errors'
import type { LockAging } from '../locks/lock-age'
import { describeLock } from '../locks/lock-rules'
import { listAllKeys } from '../storage/object-store'
import { isPrintableAscii, type Unit } from '@cairn/contract'
import {
  beginCommit,
  type ExtensionErrorHandler,
  type WriteExtension,
} from '../write-path/extensions'
import { epochFolder } from './layout'
import { parseTags } from './tags'
import type { UnitId } from './unit-id'
import {
  listUnits,
  pageLimit,
  READ_CONCURRENCY,
  readUnit,
  type Page,
  type PageOptions,
} from './unit-listing'
import type { Snapshot } from './unit-record-store'
import { detailsOf, toUnit, type UnitDetails } from './unit-view'
import { newUnitRecord, type UnitRecord } from './unit-record'
import type { Kernel } from '../kernel'

/** How many unit folders one listing asks the store for when a call reads them all. */
const LISTING_PAGE = 1000

interface UnitCatalogOptions {
  kernel: Kernel
  extensions: readonly WriteExtension[]
  onExtensionError: ExtensionErrorHandler
}

/** Which units a listing shows. */
export interface UnitFilter {
  /** Units whose IDs start with this (by characters). */
  prefix?: string
  /** Units that carry every one of these tags. */
  tags?: readonly string[]
  /** Units whose IDs pass this test (a surface's own naming, such as a workspace-name search). */
  match?: (id: UnitId) => boolean
}

/**
 * The units themselves: creating, reading, listing (by prefix and tags), their settings and tags,
 * and deleting them with everything they hold.
 */
export class UnitCatalog {
  readonly #kernel: Kernel
  readonly #extensions: readonly WriteExtension[]
  readonly #onExtensionError: ExtensionErrorHandler

  constructor(options: UnitCatalogOptions) {
    this.#kernel = options.kernel
    this.#extensions = options.extensions
    this.#onExtensionError = options.onExtensionError
  }

  /** @throws UnitExistsError, InvalidRequestError (bad tags), ForbiddenError */
  async create(principal: Principal, id: UnitId, options: { tags?: unknown } = {}): Promise<Unit> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    const tags = parseTags(options.tags ?? [])
    return this.#kernel.records.update(id, (current) => {
      if (current !== undefined) throw new UnitExistsError(id)
      const record = { ...newUnitRecord(id, this.#kernel.clock, this.#kernel.ids), tags }
      return Promise.resolve({ put: record, result: toUnit(record, this.#aging()) })
    })
  }

  /** @throws UnitNotFoundError, ForbiddenError */
  async get(principal: Principal, id: UnitId): Promise<Unit> {
    await demand(this.#kernel.authorizer, principal, 'unit:read', id)
    return toUnit((await readUnit(this.#kernel.records, id)).record, this.#aging())
  }

  /**
   * A unit's metadata with the settings only some surfaces show. `unit:read` by default; a
   * surface that shows a unit only to reach its outputs (the `cloud` block's workspace, read by
   * `terraform_remote_state`) asks for `unit:outputs`.
   *
   * @throws UnitNotFoundError, ForbiddenError
   */
  async details(
    principal: Principal,
    id: UnitId,
    options: { permission?: 'unit:read' | 'unit:outputs' } = {},
  ): Promise<UnitDetails> {
    await demand(this.#kernel.authorizer, principal, options.permission ?? 'unit:read', id)
    return detailsOf((await readUnit(this.#kernel.records, id)).record, this.#aging())
  }

  /**
   * The units that match `filter` and that the caller may read, in ID order, up to `limit` a
   * page. A page is filled from as many listings as it takes, so a filter that few units pass
   * still answers full pages.
   *
   * @throws InvalidRequestError (a bad prefix, cursor or limit)
   */
  async list(principal: Principal, options: PageOptions & UnitFilter = {}): Promise<Page<Unit>> {
    const limit = pageLimit(options.limit)
    const items: Unit[] = []
    let cursor = options.cursor
    for (;;) {
      const page = await listUnits(this.#kernel.records, {
        limit,
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        ...(cursor === undefined ? {} : { cursor }),
      })
      const found = await this.#matching(principal, page.items, options)
      for (const [index, record] of found.entries()) {
        if (record === undefined) continue
        items.push(toUnit(record, this.#aging()))
        if (items.length < limit) continue
        // A full page ends at its last unit, which the next page starts after.
        const last = index === found.length - 1 && page.nextCursor === null
        return { items, nextCursor: last ? null : record.id }
      }
      if (page.nextCursor === null) return { items, nextCursor: null }
      cursor = page.nextCursor
    }
  }

  /**
   * One numbered page (`offset`, `limit`) of the units that match, with how many match in all,
   * for surfaces that page by number (the TFE API's `page[number]` and total count). It lists
   * every unit under the prefix, so it costs what the prefix holds (records this process has
   * already read at their current ETag are not read again).
   *
   * @throws InvalidRequestError (a bad prefix)
   */
  async numberedPage(
    principal: Principal,
    options: UnitFilter & { offset: number; limit: number },
  ): Promise<{ items: UnitDetails[]; total: number }> {
    const items: UnitDetails[] = []
    let total = 0
    let cursor: string | undefined
    do {
      const page = await listUnits(this.#kernel.records, {
        limit: LISTING_PAGE,
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        ...(cursor === undefined ? {} : { cursor }),
      })
      for (const record of await this.#matching(principal, page.items, options)) {
        if (record === undefined) continue
        if (total >= options.offset && items.length < options.limit)
          items.push(detailsOf(record, this.#aging()))
        total += 1
      }
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return { items, total }
  }

  /** Those of the listed records that pass the filter and that the caller may read. */
  async #matching(
    principal: Principal,
    listed: readonly Snapshot[],
    filter: UnitFilter,
  ): Promise<(UnitRecord | undefined)[]> {
    const tags = filter.tags ?? []
    return mapLimit(listed, READ_CONCURRENCY, async ({ record }) => {
      const id = record.id as UnitId
      if (filter.match !== undefined && !filter.match(id)) return undefined
      if (!tags.every((tag) => record.tags.includes(tag))) return undefined
      return (await this.#kernel.authorizer.can(principal, 'unit:read', id)) ? record : undefined
    })
  }

  /**
   * Changes a unit's settings: its tags, and the Terraform version its `cloud` workspace names.
   *
   * @throws UnitNotFoundError, InvalidRequestError, ForbiddenError
   */
  async update(
    principal: Principal,
    id: UnitId,
    changes: { tags?: unknown; terraformVersion?: string | null },
  ): Promise<UnitDetails> {
    const tags = changes.tags === undefined ? undefined : parseTags(changes.tags)
    const version = changes.terraformVersion
    if (
      version !== undefined &&
      version !== null &&
      (version === '' || version.length > 64 || !isPrintableAscii(version, { spaces: false }))
    ) {
      throw new InvalidRequestError('terraform-version must be 1 to 64 printable characters')
    }
    return this.#change(principal, id, () => ({
      ...(tags === undefined ? {} : { tags }),
      ...(version === undefined ? {} : { terraform_version: version }),
    }))
  }

  /**
   * Changes a unit's tags from what they are at the moment of the write: `edit` gets the current
   * tags and returns the new ones, and runs again if another writer got in first, so concurrent
   * edits (one adds a tag, another removes one) both hold.
   *
   * @param edit a pure function of the current tags
   * @throws UnitNotFoundError, InvalidRequestError (a bad tag), ForbiddenError
   */
  editTags(
    principal: Principal,
    id: UnitId,
    edit: (tags: readonly string[]) => readonly string[],
  ): Promise<UnitDetails> {
    return this.#change(principal, id, (record) => ({ tags: parseTags([...edit(record.tags)]) }))
  }

  /**
   * Deletes a unit with its versions and history. A locked unit needs `force`. The write path's
   * extensions take part as in a write (edges that pointed at the unit turn unknown).
   *
   * @throws UnitNotFoundError, LockConflictError, ForbiddenError
   */
  async delete(principal: Principal, id: UnitId, options: { force?: boolean } = {}): Promise<void> {
    await demand(this.#kernel.authorizer, principal, 'unit:manage', id)
    const pending = await beginCommit(
      this.#extensions,
      { kind: 'delete', unit: id, principal },
      this.#onExtensionError,
    )
    let epoch: string
    try {
      epoch = await this.#kernel.records.update(id, (current) => {
        if (current === undefined) throw new UnitNotFoundError(id)
        const lock = current.record.lock
        if (lock !== null && options.force !== true) {
          throw new LockConflictError(
            `the unit is locked by ${describeLock(lock.info)}; unlock it first or delete with force`,
            lock.info,
          )
        }
        return Promise.resolve({ remove: true as const, result: current.record.epoch })
      })
    } catch (error) {
      await pending.aborted(error)
      throw error
    }
    await pending.committed({ version: null })
    const keys: string[] = []
    for await (const key of listAllKeys(this.#kernel.store, epochFolder(id, epoch))) keys.push(key)
    await mapLimit(keys, READ_CONCURRENCY, (key) => this.#kernel.store.delete(key))
  }

  /** When a lock counts as stale, as of now. */
  #aging(): LockAging {
    return { now: this.#kernel.clock.now(), staleAfterMs: this.#kernel.lockStaleAfterMs }
  }

  async #change(
    principal: Principal,
    id: UnitId,
    change: (record: UnitRecord) => Partial<Pick<UnitRecord, 'tags' | 'terraform_version'>>,
  ): Promise<UnitDetails> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    return this.#kernel.records.update(id, (current) => {
      if (current === undefined) throw new UnitNotFoundError(id)
      const record = { ...current.record, ...change(current.record) }
      return Promise.resolve({ put: record, result: detailsOf(record, this.#aging()) })
    })
  }
}
