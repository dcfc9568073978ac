import { createHash } from 'node:crypto'
import {
  ForbiddenError,
  parseUnitId,
  StateNotFoundError,
  type Core,
  type Principal,
  type UnitId,
} from '@cairn/core'
import type { Version } from '@cairn/contract'
import { parseStateVersionId } from '../ids'
import { notFound } from '../jsonapi/errors'
import type { PendingVersions } from './pending-versions'
import type { OutputsOnly, StateVersionView } from './state-version-view'

/** A committed version as one caller may see it: whole, or (outputs only) as core's view. */
export interface SeenVersion {
  version: Version
  outputsOnly?: OutputsOnly
}

/** The state versions one caller may see, committed or pending, each with the right it takes. */
export class VisibleVersions {
  readonly #core: Core
  readonly #pending: PendingVersions

  constructor(core: Core, pending: PendingVersions) {
    this.#core = core
    this.#pending = pending
  }

  /**
   * The current version (`at` undefined) or the one at `at`, as the caller may see it. With
   * `unit:read`, the version itself. With only `unit:outputs`, the current version with its
   * download replaced by core's outputs-only view: `terraform_remote_state` over the `cloud` and
   * `remote` backends reads `current-state-version` and its download, not the outputs endpoints,
   * and keeps only the outputs. Any older version needs `unit:read`. Undefined when the workspace
   * has no state.
   *
   * @throws ForbiddenError naming `unit:read`, for a caller with neither right or an older version
   */
  async seen(principal: Principal, unit: UnitId, at?: string): Promise<SeenVersion | undefined> {
    const core = this.#core
    if (await core.authorizer.can(principal, 'unit:read', unit)) {
      if (at !== undefined) return { version: await core.versions.version(principal, unit, at) }
      const newest = (await core.versions.list(principal, unit, { limit: 1 })).items[0]
      return newest === undefined ? undefined : { version: newest }
    }
    const refused = new ForbiddenError(`${principal.subject} does not have unit:read on ${unit}`)
    if (!(await core.authorizer.can(principal, 'unit:outputs', unit))) throw refused
    const view = await core.versions.outputsView(principal, unit).catch((error: unknown) => {
      if (error instanceof StateNotFoundError) return undefined
      throw error
    })
    if (view === undefined) return undefined
    if (at !== undefined && Date.parse(at) !== Date.parse(view.version.timestamp)) throw refused
    // Terraform does not check a download against the state version's `md5` (it hashes what it
    // got), but what the caller is told must describe what it gets.
    const md5 = createHash('md5').update(view.body).digest('hex')
    return { version: view.version, outputsOnly: { body: view.body, md5 } }
  }

  /**
   * A state version by ID: a committed version, or a pending one (finished or not).
   *
   * @throws TfeError 404 for an ID that names no version
   */
  async find(principal: Principal, id: string): Promise<StateVersionView> {
    const committed = parseStateVersionId(id)
    if (committed !== undefined) {
      const found = await this.seen(principal, committed.unit, committed.timestamp)
      if (found === undefined) throw notFound(`no state version ${id}`)
      return { id, unit: committed.unit, created: found.version.timestamp, ...found }
    }
    const found = await this.#pending.get(id)
    if (found === undefined) throw notFound(`no state version ${id}`)
    const { record } = found
    const unit = parseUnitId(record.unit)
    // Reading needs the same right as reading the unit itself.
    const version =
      record.version === null
        ? null
        : await this.#core.versions.version(principal, unit, record.version)
    if (version === null) await this.#core.units.details(principal, unit)
    return { id, unit, version, created: record.created, declared: record }
  }
}
