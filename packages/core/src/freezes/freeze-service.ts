import { demandAdmin, type Authorizer } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { parsePrefix, scopeCovers } from '../access/scope'
import { FreezeNotFoundError, InvalidRequestError, UnitFrozenError } from '../errors'
import { iso, type Clock } from '../runtime/clock'
import type { IdSource } from '../runtime/id-source'
import { hasControlCharacters, type Freeze } from '@cairn/contract'
import type { UnitId } from '../units/unit-id'
import type { FreezeStore } from './freeze-store'

/** The longest reason a freeze may give: it is shown whole in Terraform's error. */
export const MAX_FREEZE_REASON = 500

/**
 * A freeze's prefix and reason as `create` takes them, checked without freezing anything (the
 * dashboard asks before it freezes).
 *
 * @throws InvalidRequestError
 */
export function parseFreezeRequest(request: { prefix: unknown; reason: unknown }): {
  prefix: string
  reason: string
} {
  const prefix = parsePrefix(request.prefix)
  const reason = typeof request.reason === 'string' ? request.reason.trim() : ''
  if (reason === '' || reason.length > MAX_FREEZE_REASON) {
    throw new InvalidRequestError(`reason must be 1 to ${MAX_FREEZE_REASON} characters`)
  }
  if (hasControlCharacters(reason)) {
    throw new InvalidRequestError('reason must not hold control characters')
  }
  return { prefix, reason }
}

interface FreezeServiceOptions {
  freezes: FreezeStore
  authorizer: Authorizer
  clock: Clock
  ids: IdSource
}

/**
 * Freezes (DESIGN section 3): an administrator stops every lock and every write under a prefix
 * (`prod/*` before a migration, `*` for a release) until the freeze is deleted. Unlocks, forced
 * or not, and reads stay allowed, so a freeze never traps a lock holder. Every check reads the
 * stored record (a HEAD), so a freeze applies at once on every instance.
 */
export class FreezeService {
  readonly #freezes: FreezeStore
  readonly #authorizer: Authorizer
  readonly #clock: Clock
  readonly #ids: IdSource

  constructor(options: FreezeServiceOptions) {
    this.#freezes = options.freezes
    this.#authorizer = options.authorizer
    this.#clock = options.clock
    this.#ids = options.ids
  }

  /**
   * Freezes `prefix` (`*`, `<prefix>/*` or one unit ID, as an RBAC scope).
   *
   * @throws ForbiddenError, InvalidRequestError
   */
  async create(principal: Principal, request: { prefix: unknown; reason: unknown }) {
    await demandAdmin(this.#authorizer, principal, 'freeze units')
    const { prefix, reason } = parseFreezeRequest(request)
    const freeze: Freeze = {
      id: `frz-${this.#ids.token()}`,
      prefix,
      reason,
      created: iso(this.#clock.now()),
      by: principal.email ?? principal.subject,
    }
    return this.#freezes.update((record) => ({
      record: { ...record, freezes: [...record.freezes, freeze] },
      result: freeze,
    }))
  }

  /** Every freeze in force, oldest first. @throws ForbiddenError */
  async list(principal: Principal): Promise<Freeze[]> {
    await demandAdmin(this.#authorizer, principal, 'list freezes')
    return (await this.#freezes.read()).record.freezes.map((freeze) => ({ ...freeze }))
  }

  /** Lifts a freeze and answers it. @throws ForbiddenError, FreezeNotFoundError */
  async delete(principal: Principal, id: string): Promise<Freeze> {
    await demandAdmin(this.#authorizer, principal, 'lift freezes')
    return this.#freezes.update((record) => {
      const found = record.freezes.find((freeze) => freeze.id === id)
      if (found === undefined) throw new FreezeNotFoundError(id)
      return {
        record: { ...record, freezes: record.freezes.filter((freeze) => freeze !== found) },
        result: found,
      }
    })
  }

  /** Begins the read of the freezes that the request being served will check. */
  prefetch(): void {
    this.#freezes.prefetch()
  }

  /**
   * Refuses a lock or a write of a unit a freeze covers (the oldest such freeze is named).
   * `fresh`: against the freezes as stored now, not as read when the request arrived.
   *
   * @throws UnitFrozenError
   */
  async check(unit: UnitId, options: { fresh?: boolean } = {}): Promise<void> {
    const { record } = await this.#freezes.read(options)
    const covering = record.freezes.find((freeze) => scopeCovers(freeze.prefix, unit))
    if (covering !== undefined) throw new UnitFrozenError(unit, { ...covering })
  }
}
