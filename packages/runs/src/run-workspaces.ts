import {
  demand,
  InvalidRequestError,
  iso,
  listAllKeys,
  PreconditionFailedError,
  readRecord,
  writeRecord,
  type Clock,
  type Core,
  type IdSource,
  type ObjectStore,
  type Principal,
  type UnitId,
  type WriteExtension,
} from '@cairn/core'
import { EXECUTION_MODES } from '@cairn/contract'
import * as v from 'valibot'
import { readArchive } from './config-archive'
import { configKey, configVersionKey, RUN_KEYS, settingsKey } from './run-keys'

/** An archive may unpack to this many times its bound, no more. */
const UNPACKED_FACTOR = 10
const CONFIG_ID = /^cv-[0-9a-f]{32}$/
/** An upload no run has taken is removed after this long. */
export const UNUSED_CONFIG_MS = 24 * 60 * 60_000

export { EXECUTION_MODES }
/** Where a unit's runs happen when Terraform's `cloud` block plans or applies it. */
export type ExecutionMode = (typeof EXECUTION_MODES)[number]

const SettingsSchema = v.object({
  /** `local`: Terraform runs where it is called (the default); `remote` or `agent`: on agents. */
  execution_mode: v.picklist(EXECUTION_MODES),
  updated: v.string(),
  updated_by: v.string(),
})

const ConfigVersionSchema = v.object({
  id: v.string(),
  unit: v.string(),
  /** Made for a plan only (`terraform plan`): no apply may use it. */
  speculative: v.boolean(),
  created: v.string(),
  created_by: v.string(),
})
export type ConfigVersion = v.InferOutput<typeof ConfigVersionSchema> & {
  status: 'pending' | 'uploaded'
}

/**
 * What runs keep per unit for the `cloud` block: the workspace's execution mode, and the
 * configuration versions that Terraform makes before it uploads a configuration to their signed
 * URL (`runs/config-versions/<id>.json`, the archive beside the uploads of `/v1/runs/uploads`).
 */
export class RunWorkspaces {
  readonly #core: Core
  readonly #store: ObjectStore
  readonly #clock: Clock
  readonly #ids: IdSource
  readonly #maxConfigBytes: number

  constructor(options: {
    core: Core
    store: ObjectStore
    clock: Clock
    ids: IdSource
    maxConfigBytes: number
  }) {
    this.#core = options.core
    this.#store = options.store
    this.#clock = options.clock
    this.#ids = options.ids
    this.#maxConfigBytes = options.maxConfigBytes
  }

  /** A unit's execution mode: `local` unless someone set another. */
  async executionMode(unit: UnitId): Promise<ExecutionMode> {
    const stored = await readRecord(
      this.#store,
      settingsKey(unit),
      SettingsSchema,
      `run settings of ${unit}`,
    )
    return stored?.value.execution_mode ?? 'local'
  }

  /**
   * Sets where the `cloud` block's runs of a unit happen; needs `unit:write` on it, the right a
   * run of `/v1/runs` needs too. The unit must exist (`terraform init` makes a workspace's).
   *
   * @throws InvalidRequestError, ForbiddenError, UnitNotFoundError
   */
  async setExecutionMode(principal: Principal, unit: UnitId, mode: string): Promise<void> {
    if (!(EXECUTION_MODES as readonly string[]).includes(mode)) {
      throw new InvalidRequestError(
        `execution mode must be one of ${EXECUTION_MODES.join(', ')}, not ${mode}`,
      )
    }
    await demand(this.#core.authorizer, principal, 'unit:write', unit)
    await this.#core.units.details(principal, unit)
    if (mode === 'local') {
      await this.#store.delete(settingsKey(unit))
      return
    }
    await writeRecord(this.#store, settingsKey(unit), {
      execution_mode: mode as ExecutionMode,
      updated: iso(this.#clock.now()),
      updated_by: principal.subject,
    })
  }

  /** A new configuration version of a unit, waiting for its upload. */
  async createConfigVersion(
    principal: Principal,
    unit: UnitId,
    speculative: boolean,
  ): Promise<ConfigVersion> {
    await demand(this.#core.authorizer, principal, speculative ? 'unit:read' : 'unit:write', unit)
    const record = {
      id: this.#newId(),
      unit,
      speculative,
      created: iso(this.#clock.now()),
      created_by: principal.subject,
    }
    await writeRecord(this.#store, configVersionKey(record.id), record, { ifNoneMatch: '*' })
    return { ...record, status: 'pending' }
  }

  /** A configuration version, uploaded or not; undefined for one never made. */
  async configVersion(id: string): Promise<ConfigVersion | undefined> {
    if (!CONFIG_ID.test(id)) return undefined
    const stored = await readRecord(
      this.#store,
      configVersionKey(id),
      ConfigVersionSchema,
      `configuration version ${id}`,
    )
    if (stored === undefined) return undefined
    const uploaded = (await this.#store.head(configKey(id))) !== undefined
    return { ...stored.value, status: uploaded ? 'uploaded' : 'pending' }
  }

  /**
   * Keeps an uploaded configuration once it has passed the archive's checks: under a new ID, or
   * under a configuration version's that has none yet (a second upload to its URL is refused).
   *
   * @throws ArchiveError, InvalidRequestError (400)
   */
  async upload(gzipped: Uint8Array, id?: string): Promise<{ id: string }> {
    const entries = readArchive(gzipped, this.#maxConfigBytes * UNPACKED_FACTOR)
    if (!entries.some((entry) => entry.kind === 'file' && /\.tf(\.json)?$/.test(entry.path))) {
      throw new InvalidRequestError(
        'the configuration archive holds no Terraform file (.tf or .tf.json)',
      )
    }
    const key = id ?? this.#newId()
    try {
      await this.#store.put(configKey(key), gzipped, {
        contentType: 'application/gzip',
        ...(id === undefined ? {} : { condition: { ifNoneMatch: '*' } }),
      })
    } catch (error) {
      if (error instanceof PreconditionFailedError) {
        throw new InvalidRequestError(`configuration version ${key} has its configuration already`)
      }
      throw error
    }
    return { id: key }
  }

  /** The bytes of an uploaded configuration, or undefined. */
  async config(upload: string): Promise<Buffer | undefined> {
    if (!CONFIG_ID.test(upload)) return undefined
    const object = await this.#store.get(configKey(upload))
    if (object === undefined) return undefined
    const parts: Uint8Array[] = []
    for await (const part of object.body) parts.push(part)
    return Buffer.concat(parts)
  }

  /**
   * Removes the uploads and configuration versions older than `UNUSED_CONFIG_MS` that no run
   * waiting or under way names (`inUse`): a run takes its configuration when it starts, so an
   * ended run needs it no more. Answers how many it removed.
   */
  async sweep(inUse: ReadonlySet<string>): Promise<number> {
    const before = this.#clock.now() - UNUSED_CONFIG_MS
    let removed = 0
    for (const prefix of [RUN_KEYS.configs, RUN_KEYS.configVersions]) {
      for await (const key of listAllKeys(this.#store, prefix)) {
        const id = /^(cv-[0-9a-f]{32})\.(?:tar\.gz|json)$/.exec(key.slice(prefix.length))?.[1]
        if (id === undefined || inUse.has(id) || createdAt(id) > before) continue
        await this.#store.delete(key)
        removed += 1
      }
    }
    return removed
  }

  /** A new configuration ID: its creation time (ms, 12 hex digits), then 20 random ones. */
  #newId(): string {
    const time = this.#clock.now().toString(16).padStart(12, '0')
    return `cv-${time}${`${this.#ids.token()}${this.#ids.token()}`.slice(0, 20)}`
  }

  /** Whether an upload of this ID holds a configuration. */
  async uploaded(upload: string): Promise<boolean> {
    return CONFIG_ID.test(upload) && (await this.#store.head(configKey(upload))) !== undefined
  }
}

/**
 * When a configuration ID was made. IDs made before they carried their time read as a time far
 * ahead, almost always, and so are kept.
 */
function createdAt(id: string): number {
  return Number.parseInt(id.slice(3, 15), 16)
}

/**
 * Core's write extension that forgets a unit's execution mode when the unit is deleted, so a unit
 * made again under the same name starts `local`, as every new unit does.
 */
export function runSettingsExtension(store: ObjectStore): WriteExtension {
  return {
    name: 'runs',
    beforeCommit: (change) =>
      Promise.resolve(
        change.kind === 'delete'
          ? { afterCommit: () => store.delete(settingsKey(change.unit)) }
          : undefined,
      ),
  }
}
