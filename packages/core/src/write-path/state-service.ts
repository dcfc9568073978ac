import { demand } from '../access/authorizer'
import type { Principal } from '../access/principal'
import type { UnitId } from '../units/unit-id'
import type { Provenance, Version } from '@cairn/contract'
import { parseTimestamp, versionAt } from '../versions/version-lookup'
import type { StateWriter, WriteOptions } from './state-writer'
import type { Kernel } from '../kernel'

interface StateServiceOptions {
  kernel: Kernel
  writer: StateWriter
}

/**
 * Writing a unit's state, on every surface: a new version from a body, or an old version brought
 * back. Both need `unit:write` and go through the one `StateWriter`.
 */
export class StateService {
  readonly #kernel: Kernel
  readonly #writer: StateWriter

  constructor(options: StateServiceOptions) {
    this.#kernel = options.kernel
    this.#writer = options.writer
  }

  /**
   * Stores a state as the unit's new version, after the lock rule and Terraform's serial rules.
   * The body streams through to storage; the version exists once this resolves.
   *
   * @throws UnitNotFoundError, LockConflictError, SerialConflictError, InvalidStateError,
   *   ChecksumMismatchError, StateTooLargeError, UnitFrozenError, ForbiddenError
   */
  async write(
    principal: Principal,
    id: UnitId,
    body: AsyncIterable<Uint8Array>,
    options: WriteOptions,
  ): Promise<Version> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    return this.#writer.write(principal, id, body, options)
  }

  /**
   * Appends a version imported from another store with its provenance (DESIGN section 16): needs
   * `unit:manage`, creates the unit when it is new, keeps a body that is not JSON as its source
   * kept it, and never goes behind a serial written here (`checkImportSerial`).
   *
   * @throws LockConflictError, SerialConflictError, ChecksumMismatchError, StateTooLargeError,
   *   UnitFrozenError, ForbiddenError
   */
  async import(
    principal: Principal,
    id: UnitId,
    body: AsyncIterable<Uint8Array>,
    options: Pick<WriteOptions, 'expectedMd5' | 'sizeHint' | 'lockId'> & { provenance: Provenance },
  ): Promise<Version> {
    await demand(this.#kernel.authorizer, principal, 'unit:manage', id)
    return this.#writer.write(principal, id, body, {
      ...options,
      source: 'import',
      create: true,
      keepOpaque: true,
    })
  }

  /**
   * The scope that requires states encrypted on the client for `id`, if one does
   * (`requireClientEncryption`): a surface that can ask for the body up front may say so before
   * it is sent.
   */
  clientEncryptionScope(id: UnitId): string | undefined {
    return this.#writer.clientEncryptionScope(id)
  }

  /**
   * Copies the version written at `timestamp` forward as a new version, with the serial moved past
   * the current one so the next `terraform apply` accepts it.
   *
   * @throws UnitNotFoundError, VersionNotFoundError, LockConflictError, UnitFrozenError,
   *   ForbiddenError
   */
  async restore(
    principal: Principal,
    id: UnitId,
    options: { timestamp: string; lockId?: string },
  ): Promise<Version> {
    await demand(this.#kernel.authorizer, principal, 'unit:write', id)
    const ms = parseTimestamp(options.timestamp)
    return this.#writer.restore(principal, id, options, (snapshot) =>
      versionAt(this.#kernel.store, id, snapshot, ms, options.timestamp),
    )
  }
}
