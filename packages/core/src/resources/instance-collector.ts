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
 * What one scan learned of a state's resources. The instances come as the JSON of their entries
 * (`IndexedInstance`), in the state's order and joined by commas, ready to be stored: a large
 * state's index crosses from the scan's thread as one run of bytes, and is never held as objects
 * or strings on the way to storage.
 */
export interface CollectedResources {
  /**
   * The JSON of every instance's entry, in the state's order, joined by commas (no brackets), in
   * blocks to be concatenated.
   */
  resources: Uint8Array[]
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
  /**
   * The JSON of the `count` index or `for_each` key, as `JSON.stringify` writes it (which is how
   * the address shows it), and whether it needs no escaping inside the address's own JSON.
   */
  indexKey?: string
  indexKeyPlain: boolean
  deposed?: string
  digest?: string
  /**
   * The identity attributes read, as name and JSON string (as `JSON.stringify` writes it) one
   * after the other.
   */
  identity: string[] | undefined
  /** The JSON of `sensitive_attributes`; null when too large to read. */
  sensitive?: string | null
  attributes?: Uint8Array
  attributesTooLarge: boolean
}

/** A resource field: its string, and its JSON as `JSON.stringify` writes it. */
interface Field {
  value: string
  json: string
}

/** The fields of a resource that make its instances' addresses. */
interface ResourceFields {
  module: Field
  mode: Field | undefined
  type: Field | undefined
  name: Field | undefined
  provider: Field
}

const EMPTY_FIELD: Field = { value: '', json: '""' }
/** The most distinct fields with escapes one scan keeps read (see `#fieldOf`). */
const MAX_ESCAPED_FIELDS = 1024

/**
 * What every instance of a resource shares in its entry, made once per resource: its address
 * before the index key (and that as the start of a JSON string), and the resource's fields.
 */
interface SharedParts {
  prefix: string
  prefixJson: string
  fields: string
}

const decoder = new TextDecoder()
const PROVIDER_SOURCE = /provider\["([^"]+)"\]/

/**
 * Builds index entries from the pieces the state scanner hands it as it streams through the
 * top-level `resources` array: each resource's fields, then each of its instances' fields,
 * identity attributes and the digest of its attributes. A resource whose fields do not make an
 * address (not a format 4 resource) is skipped. The pieces come as the JSON text of their values:
 * a state of 100 MiB hands over some hundred thousand, and this runs inline with its upload.
 */
export class InstanceCollector {
  /** Each instance's entry (`IndexedInstance`) as JSON, in the state's order. */
  readonly #entries = new EntryWriter()
  readonly #modules = new Set<string>()
  readonly #providers = new Set<string>()
  readonly #wanted: ((address: string) => boolean) | undefined
  readonly #onDetail: ((detail: InstanceDetail) => void) | undefined
  #truncated = false
  #fields: ResourceFields = newFields()
  /** Fields with escapes, by their JSON as the state wrote it (see `#fieldOf`). */
  readonly #escapedFields = new Map<string, Field | undefined>()
  /** `#shared()`'s answer for the current fields, once asked. */
  #sharedParts: SharedParts | undefined
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
    this.#fields = newFields()
    this.#sharedParts = undefined
    this.#instances = []
  }

  /** A resource field's JSON (undefined when too large to read). */
  resourceField(key: string, json: string | undefined): void {
    if (json === undefined) return
    const field = this.#fieldOf(json)
    if (field === undefined) return
    const fields = this.#fields
    this.#sharedParts = undefined
    switch (key) {
      case 'module':
        fields.module = field
        break
      case 'mode':
        fields.mode = field
        break
      case 'type':
        fields.type = field
        break
      case 'name':
        fields.name = field
        break
      case 'provider':
        fields.provider = field
        break
    }
  }

  /**
   * A field's string and its JSON as `JSON.stringify` writes it; undefined when not a string. A
   * plain one is its own JSON; one with escapes (a provider, a module with keys: the same few for
   * every resource of a state) is read once and kept.
   */
  #fieldOf(json: string): Field | undefined {
    if (isPlainString(json)) return { value: json.slice(1, -1), json }
    const known = this.#escapedFields.get(json)
    if (known !== undefined || this.#escapedFields.has(json)) return known
    const value = parse(json)
    const field = typeof value === 'string' ? { value, json: JSON.stringify(value) } : undefined
    if (this.#escapedFields.size < MAX_ESCAPED_FIELDS) this.#escapedFields.set(json, field)
    return field
  }

  beginInstance(): void {
    this.#instance = { identity: undefined, indexKeyPlain: true, attributesTooLarge: false }
  }

  /** An instance field's JSON (undefined when too large to read). */
  instanceField(key: string, json: string | undefined): void {
    const instance = this.#instance
    if (instance === undefined) return
    if (key === 'sensitive_attributes') {
      // Too large to read: every identity value counts as sensitive.
      instance.sensitive = json ?? null
      return
    }
    if (json === undefined) return
    if (key === 'index_key') {
      // Most keys are a plain string or a small whole number, whose JSON is used as it came.
      if (isPlainString(json) || isPlainInteger(json)) {
        instance.indexKey = json
        instance.indexKeyPlain = true
        return
      }
      const value = parse(json)
      if (typeof value === 'number' || typeof value === 'string') {
        instance.indexKey = JSON.stringify(value)
        instance.indexKeyPlain = typeof value === 'number' || !instance.indexKey.includes('\\')
      }
      return
    }
    const value = parse(json)
    if (key === 'deposed' && typeof value === 'string') instance.deposed = value
  }

  /** An identity attribute's JSON (undefined when too large to read). */
  identity(key: string, json: string | undefined): void {
    if (json === undefined || this.#instance === undefined) return
    let literal = json
    let length = json.length - 2
    if (!isPlainString(json)) {
      const value = parse(json)
      if (typeof value !== 'string') return
      literal = JSON.stringify(value)
      length = value.length
    }
    if (length !== 0 && length <= MAX_IDENTITY_CHARS) {
      ;(this.#instance.identity ??= []).push(key, literal)
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
    const { module, mode, type, name, provider } = this.#fields
    if (
      (mode?.value !== 'managed' && mode?.value !== 'data') ||
      type === undefined ||
      name === undefined
    ) {
      return
    }
    const shared = this.#shared() as SharedParts
    for (const instance of this.#instances) {
      if (this.#onDetail !== undefined) {
        const address = addressOf(shared, instance)
        if (this.#wanted?.(address) ?? true) {
          this.#onDetail({
            address,
            attributes: instance.attributesTooLarge ? undefined : text(instance.attributes),
            // Too large to read: not JSON, so every attribute counts as sensitive.
            sensitive: instance.sensitive === null ? 'unreadable' : instance.sensitive,
          })
        }
        continue
      }
      if (this.#entries.count >= MAX_INDEXED_INSTANCES) {
        this.#truncated = true
        return
      }
      // An `IndexedInstance`, written out: the resource's fields are the same for each instance.
      let json = `{"address":${addressJson(shared, instance)},${shared.fields},"digest":"${instance.digest as string}"`
      if (instance.indexKey !== undefined) json += `,"index_key":${instance.indexKey}`
      if (instance.deposed !== undefined) json += `,"deposed":${JSON.stringify(instance.deposed)}`
      json += `,"identity":${identityJson(instance)}}`
      this.#entries.add(json)
    }
    if (module.value !== '') this.#modules.add(module.value)
    const source = PROVIDER_SOURCE.exec(provider.value)?.[1]
    if (source !== undefined) this.#providers.add(source)
  }

  result(): CollectedResources {
    // In the state's order: sorting is left to the readers, off the upload's path.
    const entries = this.#entries
    return {
      resources: entries.blocks(),
      count: entries.count,
      modules: [...this.#modules].sort(compare),
      providers: [...this.#providers].sort(compare),
      truncated: this.#truncated,
    }
  }

  #address(instance: PartialInstance): string | undefined {
    const shared = this.#shared()
    return shared === undefined ? undefined : addressOf(shared, instance)
  }

  /** The parts every instance of the current resource shares (undefined before its type and name). */
  #shared(): SharedParts | undefined {
    if (this.#sharedParts !== undefined) return this.#sharedParts
    const { module, mode, type, name, provider } = this.#fields
    if (type === undefined || name === undefined) return undefined
    const prefix = instanceAddress({
      module: module.value,
      mode: mode?.value === 'data' ? 'data' : 'managed',
      type: type.value,
      name: name.value,
    })
    // The fields as `JSON.stringify` writes the object of them, from each one's JSON (entries are
    // written only for a resource whose mode is known).
    const modeJson = mode === undefined ? '' : `"mode":${mode.json},`
    return (this.#sharedParts = {
      prefix,
      prefixJson: JSON.stringify(prefix).slice(0, -1),
      fields: `"module":${module.json},${modeJson}"type":${type.json},"name":${name.json},"provider":${provider.json}`,
    })
  }
}

/** An instance's address: its resource's, then its key, then whether it is deposed. */
function addressOf(shared: SharedParts, instance: PartialInstance): string {
  let address = shared.prefix
  if (instance.indexKey !== undefined) address += `[${instance.indexKey}]`
  if (instance.deposed !== undefined) address += ` (deposed ${instance.deposed})`
  return address
}

/**
 * The JSON of an instance's address. A key that needs no escaping is added to the resource's
 * part as it is (a string key's quotes escaped), without encoding the whole address again.
 */
function addressJson(shared: SharedParts, instance: PartialInstance): string {
  const key = instance.indexKey
  if (!instance.indexKeyPlain || instance.deposed !== undefined) {
    return JSON.stringify(addressOf(shared, instance))
  }
  if (key === undefined) return `${shared.prefixJson}"`
  if (key.charCodeAt(0) !== 0x22) return `${shared.prefixJson}[${key}]"`
  return `${shared.prefixJson}[\\"${key.slice(1, -1)}\\"]"`
}

/** Whether `json` is a string literal without escapes: then it is its own `JSON.stringify`. */
function isPlainString(json: string): boolean {
  const last = json.length - 1
  return (
    last > 0 &&
    json.charCodeAt(0) === 0x22 &&
    json.charCodeAt(last) === 0x22 &&
    !json.includes('\\')
  )
}

/**
 * Whether `json` is a whole number written as `JSON.stringify` writes it (no sign, exponent or
 * leading zero), short enough to be exact.
 */
function isPlainInteger(json: string): boolean {
  const length = json.length
  if (length === 0 || length > 15) return false
  const first = json.charCodeAt(0)
  if (first < 0x30 || first > 0x39 || (first === 0x30 && length > 1)) return false
  for (let at = 1; at < length; at += 1) {
    const c = json.charCodeAt(at)
    if (c < 0x30 || c > 0x39) return false
  }
  return true
}

/**
 * Entries written out as UTF-8 as they are made, joined by commas, a batch of them at a time: a
 * hundred thousand short-lived strings would each outlive a garbage collection or two before being
 * joined and encoded anyway.
 * The buffer is its own memory (never a pooled slab), so the scan thread can hand it over whole.
 */
class EntryWriter {
  readonly #blocks: Buffer[] = []
  #block = Buffer.allocUnsafeSlow(0)
  #used = 0
  #pending = ''
  count = 0

  add(json: string): void {
    // Entries are joined as text and written some 16k characters at a time: one UTF-8 encoding
    // per batch instead of one per entry.
    this.#pending = this.#pending === '' ? json : `${this.#pending},${json}`
    this.count += 1
    if (this.#pending.length >= PENDING_CHARS) this.#flush()
  }

  /** Writes the pending entries out, after a comma when any were written before. */
  #flush(): void {
    const text = this.#pending
    this.#pending = ''
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    const most = 1 + text.length * 3
    if (this.#used + most > this.#block.length) this.#next(most)
    // Blocks are joined as they are, so a block may start with the comma.
    if (this.#used !== 0 || this.#blocks.length !== 0) this.#block[this.#used++] = 0x2c
    this.#used += this.#block.write(text, this.#used)
  }

  /** The entries, in blocks that are each their own memory (none shared with a pool). */
  blocks(): Uint8Array[] {
    if (this.#pending !== '') this.#flush()
    const blocks = [...this.#blocks]
    if (this.#used !== 0) blocks.push(this.#block.subarray(0, this.#used))
    return blocks
  }

  /** Starts a block with room for at least `most` bytes: small at first, a MiB once large. */
  #next(most: number): void {
    if (this.#used !== 0) this.#blocks.push(this.#block.subarray(0, this.#used))
    const size = this.#blocks.length === 0 ? 16 * 1024 : this.#blocks.length < 4 ? 256 * 1024 : MiB
    this.#block = Buffer.allocUnsafeSlow(Math.max(size, most))
    this.#used = 0
  }
}

const MiB = 1024 * 1024
const PENDING_CHARS = 16 * 1024

function newFields(): ResourceFields {
  return {
    module: EMPTY_FIELD,
    mode: undefined,
    type: undefined,
    name: undefined,
    provider: EMPTY_FIELD,
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

/** The JSON of the identity values that no sensitive path covers, ordered by name. */
function identityJson(instance: PartialInstance): string {
  const pairs = instance.identity
  if (pairs === undefined) return '{}'
  const sensitive = sensitiveTopNames(instance.sensitive)
  if (sensitive === 'all') return '{}'
  if (pairs.length === 2) {
    // Most instances have one identity attribute (an `id`): no sorting.
    const key = pairs[0] as string
    return sensitive.has(key) ? '{}' : `{"${key}":${pairs[1] as string}}`
  }
  const kept: [string, string][] = []
  for (let at = 0; at < pairs.length; at += 2) {
    const key = pairs[at] as string
    if (sensitive.has(key)) continue
    // A name given twice keeps its last value, as JSON.parse does.
    const earlier = kept.findIndex(([name]) => name === key)
    if (earlier !== -1) kept.splice(earlier, 1)
    kept.push([key, pairs[at + 1] as string])
  }
  kept.sort(([a], [b]) => compare(a, b))
  // The names are the identity attributes' own (plain), and the values already JSON.
  return `{${kept.map(([key, literal]) => `"${key}":${literal}`).join(',')}}`
}

const NONE: ReadonlySet<string> = new Set()

/**
 * The top-level attribute names that `sensitive_attributes` marks (wholly or in part), or `all`
 * when it cannot be read: identity values are kept only when surely not sensitive.
 */
function sensitiveTopNames(json: string | null | undefined): ReadonlySet<string> | 'all' {
  if (json === undefined || json === '[]') return NONE
  if (json === null) return 'all'
  const paths = parse(json)
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

/** The value of `json`; a plain string without escapes is read without the JSON parser. */
function parse(json: string): unknown {
  const last = json.length - 1
  if (last > 0 && json.charCodeAt(0) === 0x22 && json.charCodeAt(last) === 0x22) {
    if (!json.includes('\\')) return json.slice(1, last)
  }
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

function text(raw: Uint8Array | undefined): string | undefined {
  return raw === undefined ? undefined : decoder.decode(raw)
}
