import { IDENTITY_ATTRIBUTES, MAX_IDENTITY_CHARS, MAX_INDEXED_INSTANCES } from './resource-index'

/** An instance's raw attributes and sensitivity, for an attribute-level diff. */
export interface InstanceDetail {
  address: string
  /** The raw JSON of `attributes`; undefined when larger than the scanner keeps. */
  attributes: string | undefined
  /** The raw JSON of `sensitive_attributes`, when present. */
  sensitive: string | undefined
}

/**
 * What one scan learned of a state's resources. The instances come as the JSON text of their
 * entries (`IndexedInstance`), in the state's order and joined by commas, ready to be stored: a
 * large state's index crosses from the scan's thread as one string, and is never held as
 * objects on the way to storage.
 */
export interface CollectedResources {
  /** The JSON of every instance's entry, in the state's order, joined by commas (no brackets). */
  resources: string
  /** How many instances `resources` holds. */
  count: number
  modules: string[]
  providers: string[]
  truncated: boolean
}

/** The top-level fields of a resource that make its address. */
export const RESOURCE_FIELDS = new Set(['module', 'mode', 'type', 'name', 'provider'])
/** The fields of an instance the index reads, besides its attributes. */
export const INSTANCE_FIELDS = new Set(['index_key', 'deposed', 'sensitive_attributes'])
/** The attributes whose string values identify an instance. */
export const IDENTITY_FIELDS: ReadonlySet<string> = new Set(IDENTITY_ATTRIBUTES)

interface PartialInstance {
  indexKey?: number | string
  deposed?: string
  digest?: string
  identity: Map<string, string> | undefined
  sensitive?: Uint8Array | null
  attributes?: Uint8Array
  attributesTooLarge: boolean
}

const decoder = new TextDecoder()
const PROVIDER_SOURCE = /provider\["([^"]+)"\]/

/**
 * Builds index entries from the pieces the state scanner hands it as it streams through the
 * top-level `resources` array: each resource's fields, then each of its instances' fields,
 * identity attributes and the digest of its attributes. A resource whose fields do not make an
 * address (not a format 4 resource) is skipped.
 */
export class InstanceCollector {
  readonly #resources: { address: string; json: string }[] = []
  readonly #modules = new Set<string>()
  readonly #providers = new Set<string>()
  readonly #wanted: ((address: string) => boolean) | undefined
  readonly #onDetail: ((detail: InstanceDetail) => void) | undefined
  #truncated = false
  #fields = new Map<string, string>()
  #instances: PartialInstance[] = []
  #instance: PartialInstance | undefined

  /**
   * With `detail`, the raw attributes of the instances whose address `wanted` accepts go to
   * `onDetail` as each resource ends, and no index is kept.
   */
  constructor(detail?: {
    wanted: (address: string) => boolean
    onDetail: (detail: InstanceDetail) => void
  }) {
    this.#wanted = detail?.wanted
    this.#onDetail = detail?.onDetail
  }

  /** Whether the raw attributes of instances are wanted at all (detail mode). */
  get keepsAttributes(): boolean {
    return this.#onDetail !== undefined
  }

  beginResource(): void {
    this.#fields = new Map()
    this.#instances = []
  }

  resourceField(key: string, raw: Uint8Array | undefined): void {
    if (raw === undefined) return
    const value = parse(raw)
    if (typeof value === 'string') this.#fields.set(key, value)
  }

  beginInstance(): void {
    this.#instance = { identity: undefined, attributesTooLarge: false }
  }

  instanceField(key: string, raw: Uint8Array | undefined): void {
    const instance = this.#instance
    if (instance === undefined) return
    if (key === 'sensitive_attributes') {
      // Too large to read: every identity value counts as sensitive.
      instance.sensitive = raw ?? null
      return
    }
    if (raw === undefined) return
    const value = parse(raw)
    if (key === 'index_key' && (typeof value === 'number' || typeof value === 'string')) {
      instance.indexKey = value
    } else if (key === 'deposed' && typeof value === 'string') {
      instance.deposed = value
    }
  }

  identity(key: string, raw: Uint8Array | undefined): void {
    if (raw === undefined || this.#instance === undefined) return
    const value = parse(raw)
    if (typeof value === 'string' && value !== '' && value.length <= MAX_IDENTITY_CHARS) {
      ;(this.#instance.identity ??= new Map()).set(key, value)
    }
  }

  /** The instance's attributes: their digest, and in detail mode their bytes (or too large). */
  attributes(digest: string, raw: Uint8Array | undefined, tooLarge: boolean): void {
    const instance = this.#instance
    if (instance === undefined) return
    instance.digest = digest
    if (raw !== undefined) instance.attributes = raw
    instance.attributesTooLarge = tooLarge
  }

  endInstance(): void {
    const instance = this.#instance
    this.#instance = undefined
    if (instance?.digest === undefined) return
    if (this.#onDetail !== undefined) {
      // Most states name the resource before its instances: decide now, keep only what is wanted.
      const address = this.#address(instance)
      if (address !== undefined && !(this.#wanted?.(address) ?? true)) return
    }
    this.#instances.push(instance)
  }

  endResource(): void {
    const fields = this.#fields
    const mode = fields.get('mode')
    const type = fields.get('type')
    const name = fields.get('name')
    if ((mode !== 'managed' && mode !== 'data') || type === undefined || name === undefined) return
    const module = fields.get('module') ?? ''
    const provider = fields.get('provider') ?? ''
    let shared: string | undefined
    for (const instance of this.#instances) {
      const address = this.#address(instance) as string
      if (this.#onDetail !== undefined) {
        if (this.#wanted?.(address) ?? true) {
          this.#onDetail({
            address,
            attributes: instance.attributesTooLarge ? undefined : text(instance.attributes),
            // Too large to read: not JSON, so every attribute counts as sensitive.
            sensitive: instance.sensitive === null ? 'unreadable' : text(instance.sensitive),
          })
        }
        continue
      }
      if (this.#resources.length >= MAX_INDEXED_INSTANCES) {
        this.#truncated = true
        return
      }
      // An `IndexedInstance`, written out: the resource's fields are the same for each instance.
      shared ??= JSON.stringify({ module, mode, type, name, provider }).slice(1, -1)
      let json = `{"address":${JSON.stringify(address)},${shared},"digest":"${instance.digest as string}"`
      if (instance.indexKey !== undefined)
        json += `,"index_key":${JSON.stringify(instance.indexKey)}`
      if (instance.deposed !== undefined) json += `,"deposed":${JSON.stringify(instance.deposed)}`
      json += `,"identity":${JSON.stringify(identityOf(instance))}}`
      this.#resources.push({ address, json })
    }
    if (module !== '') this.#modules.add(module)
    const source = PROVIDER_SOURCE.exec(provider)?.[1]
    if (source !== undefined) this.#providers.add(source)
  }

  result(): CollectedResources {
    // In the state's order: sorting is left to the readers, off the upload's path.
    const entries = this.#resources
    return {
      resources: entries.map((entry) => entry.json).join(','),
      count: entries.length,
      modules: [...this.#modules].sort(compare),
      providers: [...this.#providers].sort(compare),
      truncated: this.#truncated,
    }
  }

  #address(instance: PartialInstance): string | undefined {
    const fields = this.#fields
    const mode = fields.get('mode')
    const type = fields.get('type')
    const name = fields.get('name')
    if (typeof type !== 'string' || typeof name !== 'string') return undefined
    return instanceAddress({
      module: fields.get('module') ?? '',
      mode: mode === 'data' ? 'data' : 'managed',
      type,
      name,
      index_key: instance.indexKey,
      deposed: instance.deposed,
    })
  }
}

/**
 * An instance's address as Terraform writes it: `module.a["k"].aws_s3_bucket.logs[0]`, with
 * `data.` before a data source and ` (deposed <key>)` after a deposed object.
 */
export function instanceAddress(parts: {
  module: string
  mode: 'managed' | 'data'
  type: string
  name: string
  index_key?: number | string | undefined
  deposed?: string | undefined
}): string {
  let address = parts.module === '' ? '' : `${parts.module}.`
  if (parts.mode === 'data') address += 'data.'
  address += `${parts.type}.${parts.name}`
  const key = parts.index_key
  if (typeof key === 'number') address += `[${key}]`
  else if (typeof key === 'string') address += `[${JSON.stringify(key)}]`
  if (parts.deposed !== undefined) address += ` (deposed ${parts.deposed})`
  return address
}

/** Orders by UTF-16 code units, as every sorted list of the index is ordered. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** The identity values that no sensitive path covers. */
function identityOf(instance: PartialInstance): Record<string, string> {
  const identity: Record<string, string> = {}
  if (instance.identity === undefined) return identity
  const sensitive = sensitiveTopNames(instance.sensitive)
  if (sensitive === 'all') return identity
  for (const [key, value] of [...instance.identity].sort(([a], [b]) => compare(a, b))) {
    if (!sensitive.has(key)) identity[key] = value
  }
  return identity
}

/**
 * The top-level attribute names that `sensitive_attributes` marks (wholly or in part), or `all`
 * when it cannot be read: identity values are kept only when surely not sensitive.
 */
function sensitiveTopNames(raw: Uint8Array | null | undefined): Set<string> | 'all' {
  if (raw === undefined) return new Set()
  if (raw === null) return 'all'
  const paths = parse(raw)
  if (!Array.isArray(paths)) return 'all'
  const names = new Set<string>()
  for (const path of paths) {
    const step: unknown = Array.isArray(path) ? path[0] : undefined
    if (typeof step !== 'object' || step === null) return 'all'
    const { type, value } = step as { type?: unknown; value?: unknown }
    if (type !== 'get_attr' || typeof value !== 'string') return 'all'
    names.add(value)
  }
  return names
}

/** The JSON value of `raw`; a plain string without escapes is read without the JSON parser. */
function parse(raw: Uint8Array): unknown {
  const last = raw.length - 1
  if (last > 0 && raw[0] === 0x22 && raw[last] === 0x22 && !raw.includes(0x5c)) {
    return decoder.decode(raw.subarray(1, last))
  }
  try {
    return JSON.parse(decoder.decode(raw))
  } catch {
    return undefined
  }
}

function text(raw: Uint8Array | undefined): string | undefined {
  return raw === undefined ? undefined : decoder.decode(raw)
}
