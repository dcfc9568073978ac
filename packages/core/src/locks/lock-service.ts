import { demand } from '../access/authorizer'
import { isSamePrincipal, type Principal } from '../access/principal'
import { InvalidRequestError, LockConflictError, UnitNotFoundError } from '../errors'
import { iso } from '../runtime/clock'
import { writeRecord } from '../storage/stored-json'
import { historyKey } from '../units/layout'
import type { UnitId } from '../units/unit-id'
import {
  newUnitRecord,
  type HeldLock,
  type HistoryEvent,
  type Source,
  type UnitRecord,
} from '../units/unit-record'
import type { LockInfo, LockRequest } from './lock-info'
import { completeLockInfo, describeLock } from './lock-rules'
import type { Kernel } from '../kernel'

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
   * Takes the unit's lock. Sending the ID of the lock already held succeeds again (a retried
   * request); any other request while locked fails. `create` makes the unit first if it does not
   * exist (first use through the `http` backend), which needs `unit:write` too.
   *
   * @throws UnitNotFoundError, LockConflictError, ForbiddenError
   */
  async lock(
    principal: Principal,
    id: UnitId,
    request: LockRequest,
    options: { source: Source; create?: boolean },
  ): Promise<LockInfo> {
    await demand(this.#kernel.authorizer, principal, 'unit:lock', id)
    if (options.create === true) await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    return this.#kernel.records.update(id, (current) => {
      if (current === undefined && options.create !== true) throw new UnitNotFoundError(id)
      const record = current?.record ?? newUnitRecord(id, this.#kernel.clock, this.#kernel.ids)
      const held = record.lock
      if (held !== null) {
        if (request.ID !== undefined && held.info.ID === request.ID) {
          return Promise.resolve({ keep: true as const, result: held.info })
        }
        throw new LockConflictError(
          `the unit is already locked by ${describeLock(held.info)}`,
          held.info,
        )
      }
      const now = this.#kernel.clock.now()
      const info = completeLockInfo(request, principal, this.#kernel.ids.uuid(), now)
      const lock: HeldLock = {
        info,
        subject: principal.subject,
        ...(principal.issuer === undefined ? {} : { issuer: principal.issuer }),
        source: options.source,
        acquired: iso(now),
      }
      return Promise.resolve({ put: { ...record, lock }, result: info })
    })
  }

  /**
   * Releases the lock: with the holder's ID, or with `force` (which needs `unit:manage` and is
   * recorded in the unit's history). Unlocking an unlocked unit succeeds and returns null.
   * `asHolder` is for protocols whose unlock carries no lock ID: the holder is the principal that
   * took it through the same surface.
   *
   * @returns the lock released, or null
   * @throws UnitNotFoundError, LockConflictError, InvalidRequestError, ForbiddenError
   */
  async unlock(
    principal: Principal,
    id: UnitId,
    options: { lockId?: string; force?: boolean; source: Source; asHolder?: boolean },
  ): Promise<LockInfo | null> {
    const force = options.force === true
    await demand(this.#kernel.authorizer, principal, force ? 'unit:manage' : 'unit:lock', id)
    const outcome = await this.#kernel.records.update<{
      released: HeldLock | null
      record: UnitRecord
    }>(id, (current) => {
      if (current === undefined) throw new UnitNotFoundError(id)
      const { record } = current
      const held = record.lock
      if (held === null)
        return Promise.resolve({ keep: true as const, result: { released: null, record } })
      const unlocked = { put: { ...record, lock: null }, result: { released: held, record } }
      if (options.lockId !== undefined && options.lockId === held.info.ID)
        return Promise.resolve(unlocked)
      if (force) return Promise.resolve(unlocked)
      if (options.asHolder === true) {
        if (isSamePrincipal(held, principal) && held.source === options.source) {
          return Promise.resolve(unlocked)
        }
        throw new LockConflictError(`the unit is locked by ${describeLock(held.info)}`, held.info)
      }
      if (options.lockId === undefined) {
        throw new InvalidRequestError('unlocking needs the ID of the lock held, or force')
      }
      throw new LockConflictError(
        `the unit is locked by ${describeLock(held.info)}, not by lock ${options.lockId}`,
        held.info,
      )
    })
    const released = outcome.released
    if (released !== null && force && options.lockId !== released.info.ID) {
      await this.#recordEvent(id, outcome.record.epoch, {
        timestamp: iso(this.#kernel.clock.now()),
        type: 'force_unlock',
        actor: principal.subject,
        source: options.source,
        lock: released.info,
      })
    }
    return released?.info ?? null
  }

  async #recordEvent(id: UnitId, epoch: string, event: HistoryEvent): Promise<void> {
    const key = historyKey(id, epoch, Date.parse(event.timestamp), this.#kernel.ids.token())
    await writeRecord(this.#kernel.store, key, event)
  }
}
