import { demand } from '../access/authorizer'
import { isSamePrincipal, type Principal } from '../access/principal'
import { mapLimit } from '../concurrency/map-limit'
import { InvalidRequestError, LockConflictError, UnitNotFoundError } from '../errors'
import { iso } from '../runtime/clock'
import { writeRecord } from '../storage/stored-json'
import { printableText, type LockInfo, type LockRequest, type Source } from '@cairn/contract'
import { historyKey } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import {
  newUnitRecord,
  type HeldLock,
  type HistoryRecord,
  type UnitRecord,
} from '../units/unit-record'
import {
  listUnits,
  pageLimit,
  READ_CONCURRENCY,
  type Page,
  type PageOptions,
} from '../units/unit-listing'
import type { HeldLockView } from '@cairn/contract'
import { viewOf } from './held-lock-view'
import { completeLockInfo, describeLock, releaseOf, type UnlockRequest } from './lock-rules'
import type { Kernel } from '../kernel'

/** The longest reason a forced unlock may give, in characters. */
export const MAX_UNLOCK_REASON_LENGTH = 500
/** How many unit records one lock listing asks the store for at a time. */
const LISTING_PAGE = 1000

/**
 * A unit's one lock, shared by every surface: taken and released by one conditional write of the
 * unit record, so the lock and the current version can never disagree. Writes check it through
 * `checkWriteLock` (lock-rules.ts).
 */
export class LockService {
  readonly #kernel: Kernel

  constructor(kernel: Kernel) {
    this.#kernel = kernel
  }

  /**
   * Takes the unit's lock. The holder sending the ID of the lock it holds succeeds again (a
   * retried request); any other request while locked fails. `create` makes the unit first if it does not
   * exist (first use through the `http` backend), which needs `unit:write` too.
   *
   * A freeze covering the unit refuses every new lock: it is checked in the conditional write
   * that would take the lock. A retried request for the lock already held still succeeds.
   *
   * @throws UnitNotFoundError, LockConflictError, UnitFrozenError, ForbiddenError
   */
  async lock(
    principal: Principal,
    id: UnitId,
    request: LockRequest,
    options: {
      source: Source
      create?: boolean
      /** When the client signed the request (S3's X-Amz-Date), epoch ms: kept with the lock. */
      signedAt?: number
    },
  ): Promise<LockInfo> {
    await demand(this.#kernel.authorizer, principal, 'unit:lock', id)
    if (options.create === true) await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    const { info: result, taken } = await this.#kernel.records.update(id, async (current) => {
      if (current === undefined && options.create !== true) throw new UnitNotFoundError(id)
      const record = current?.record ?? newUnitRecord(id, this.#kernel.clock, this.#kernel.ids)
      const held = record.lock
      if (held !== null) {
        // The holder's own retry; the ID alone, which every reader sees, is not enough.
        if (request.ID === held.info.ID && isSamePrincipal(held, principal)) {
          return { keep: true as const, result: { info: held.info, taken: false } }
        }
        throw new LockConflictError(
          `the unit is already locked by ${describeLock(held.info)}`,
          held.info,
        )
      }
      await this.#kernel.freezes.check(id)
      const now = this.#kernel.clock.now()
      const info = completeLockInfo(request, principal, this.#kernel.ids.uuid(), now)
      const lock: HeldLock = {
        info,
        subject: principal.subject,
        ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
        source: options.source,
        acquired: iso(now),
        ...(options.signedAt === undefined ? {} : { signed: iso(options.signedAt) }),
      }
      return { put: { ...record, lock }, result: { info, taken: true } }
    })
    if (taken) {
      await this.#kernel.lockEvents?.({
        type: 'unit.locked',
        unit: id,
        principal,
        source: options.source,
        lock: result,
      })
    }
    return result
  }

  /**
   * Releases the lock. The holder (the same principal: subject and issuer) releases it with its
   * ID, or, on protocols whose unlock carries no lock ID (`asHolder`), through the surface it took
   * it with. Anyone else is refused whatever ID they give: they force, which needs `unit:manage`
   * and is recorded as a forced unlock in the unit's history, with the `reason` given, and heard
   * as `unit.force_unlocked`. A forced unlock that names a lock releases only that one. An unlock
   * that says when it was signed (`signedAt`) releases no lock taken after that. Unlocking an
   * unlocked unit succeeds and returns null.
   *
   * @returns the lock released, or null
   * @throws UnitNotFoundError, LockConflictError, InvalidRequestError, PreconditionError,
   *   ForbiddenError
   */
  async unlock(
    principal: Principal,
    id: UnitId,
    options: UnlockRequest & {
      /** Why, for a forced unlock: kept in the unit's history. */
      reason?: string
    },
  ): Promise<LockInfo | null> {
    const force = options.force === true
    const reason = options.reason === undefined ? undefined : parseReason(options.reason)
    await demand(this.#kernel.authorizer, principal, force ? 'unit:manage' : 'unit:lock', id)
    const outcome = await this.#kernel.records.update<{
      released: HeldLock | null
      forced: boolean
      record: UnitRecord
    }>(id, (current) => {
      if (current === undefined) throw new UnitNotFoundError(id)
      const { record } = current
      const held = record.lock
      if (held === null) {
        return Promise.resolve({
          keep: true as const,
          result: { released: null, forced: false, record },
        })
      }
      const forced = releaseOf(held, principal, options) === 'forced'
      return Promise.resolve({
        put: { ...record, lock: null },
        result: { released: held, forced, record },
      })
    })
    const { released, forced } = outcome
    if (released === null) return null
    if (forced) {
      await this.#recordEvent(id, outcome.record.epoch, {
        timestamp: iso(this.#kernel.clock.now()),
        type: 'force_unlock',
        actor: principal.subject,
        source: options.source,
        lock: released.info,
        ...(reason === undefined ? {} : { reason }),
      })
    }
    await this.#kernel.lockEvents?.({
      type: forced ? 'unit.force_unlocked' : 'unit.unlocked',
      unit: id,
      principal,
      source: options.source,
      lock: released.info,
      ...(forced && reason !== undefined ? { reason } : {}),
    })
    return released.info
  }

  /**
   * Every lock held on the units under `prefix` that the caller may read (`unit:read`), in unit
   * ID order, up to `limit` a page, each with its holder, surface, age and whether it is stale.
   *
   * @throws InvalidRequestError (a bad prefix, cursor or limit)
   */
  async list(
    principal: Principal,
    options: PageOptions & { prefix?: string } = {},
  ): Promise<Page<HeldLockView>> {
    const limit = pageLimit(options.limit)
    const items: HeldLockView[] = []
    let cursor = options.cursor
    for (;;) {
      const page = await listUnits(this.#kernel.records, {
        limit: LISTING_PAGE,
        ...(options.prefix === undefined ? {} : { prefix: options.prefix }),
        ...(cursor === undefined ? {} : { cursor }),
      })
      const locked = page.items.filter(({ record }) => record.lock !== null)
      const readable = await mapLimit(locked, READ_CONCURRENCY, async ({ record }) =>
        this.#kernel.authorizer.can(principal, 'unit:read', record.id as UnitId),
      )
      const aging = { now: this.#kernel.clock.now(), staleAfterMs: this.#kernel.lockStaleAfterMs }
      for (const [index, { record }] of locked.entries()) {
        if (record.lock === null || readable[index] !== true) continue
        items.push(viewOf(record.id, record.lock, aging))
        if (items.length < limit) continue
        // A full page ends at its unit, which the next page starts after.
        const last = index === locked.length - 1 && page.nextCursor === null
        return { items, nextCursor: last ? null : record.id }
      }
      if (page.nextCursor === null) return { items, nextCursor: null }
      cursor = page.nextCursor
    }
  }

  async #recordEvent(id: UnitId, epoch: string, event: HistoryRecord): Promise<void> {
    const key = historyKey(id, epoch, Date.parse(event.timestamp), this.#kernel.ids.token())
    await writeRecord(this.#kernel.store, key, event)
  }
}

/**
 * A forced unlock's reason as it is kept and shown: control characters stripped (it is printed to
 * operators, as lock fields are).
 *
 * @throws InvalidRequestError when longer than 500 characters
 */
function parseReason(text: string): string | undefined {
  if (text.length > MAX_UNLOCK_REASON_LENGTH) {
    throw new InvalidRequestError(`reason must be at most ${MAX_UNLOCK_REASON_LENGTH} characters`)
  }
  const reason = printableText(text).trim()
  return reason === '' ? undefined : reason
}
