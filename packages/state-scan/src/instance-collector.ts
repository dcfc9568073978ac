import { IDENTITY_ATTRIBUTES, MAX_IDENTITY_CHARS, MAX_INDEXED_INSTANCES } from './entry-format'

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
   * Where the JSON of the `count` index or `for_each` key lies in the resource's scratch bytes
   * (`keyFrom` -1 when there is none), and what it is: a whole number or a string written as
   * `JSON.stringify` writes it, read as it is; or, for any other key, `keyJson`, its JSON as
   * `JSON.stringify` writes it.
   */
  keyFrom: number
  keyTo: number
  keyKind: KeyKind
  keyJson: string | undefined
  deposed: string | undefined
  /** The digest of the attributes: their length (-1 before they are read) and hash. */
  length: number
  hash: string
  /** The identity attributes read, in the order read. */
  identity: IdentityValue[] | undefined
  /** The JSON of `sensitive_attributes`; null when too large to read. */
  sensitive: string | null | undefined
  attributes: Uint8Array | undefined
  attributesTooLarge: boolean
}

const enum KeyKind {
  /** No key, or one that is neither a number nor a string. */
  None,
  /** A whole number written as `JSON.stringify` writes it: its JSON, read as it is. */
  Integer,
  /** A string without escapes: its JSON, read as it is. */
  PlainString,
  /** Any other number or string: `keyJson`. */
  Other,
}

/**
 * An identity attribute's value: its JSON as `JSON.stringify` writes it, either where it lies in
 * the resource's scratch bytes (a string without escapes) or as `literal`.
 */
interface IdentityValue {
  name: string
  from: number
  to: number
  literal: string | undefined
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
/**
 * The most bytes of raw attributes a detailed diff holds of one resource's instances before it
 * knows whether they are wanted (a state that names a resource after its instances): past it,
 * the further instances' attributes count as too large to compare.
 */
const MAX_UNDECIDED_ATTRIBUTE_BYTES = 8 * 1024 * 1024
/** The most distinct fields with escapes one scan keeps read (see `#fieldOf`). */
const MAX_ESCAPED_FIELDS = 1024

/**
 * What every instance of a resource shares in its entry, made once per resource: its address
 * before the index key, that as the start of a JSON string (text and UTF-8), and the resource's
 * fields as UTF-8.
 */
interface SharedParts {
  prefix: string
  prefixJson: string
  prefixJsonBytes: Uint8Array
  fieldsBytes: Uint8Array
}

const decoder = new TextDecoder()
const encoder = new TextEncoder()
const PROVIDER_SOURCE = /provider\["([^"]+)"\]/
const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Builds index entries from the pieces the state scanner hands it as it streams through the
 * top-level `resources` array: each resource's fields (as JSON text: a few thousand in a large
 * state), then each of its instances' fields, identity attributes and the digest of its
 * attributes (as bytes: a state of 100 MiB holds tens of thousands of instances, and this runs
 * inline with its upload). An instance's pieces are copied into the resource's scratch bytes, and
 * its entry is written from them as UTF-8 when the resource ends, without making a string of
 * them. A resource whose fields do not make an address (not a format 4 resource) is skipped.
 */
export class InstanceCollector {
  /** Each instance's entry (`IndexedInstance`) as JSON, in the state's order. */
  readonly #entries: EntryWriter
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
  /** The bytes of raw attributes held of the current resource's instances (detail mode). */
  #heldBytes = 0
  #instance: PartialInstance | undefined
  /** The provider last noted (see `#noteResource`). */
  #lastProvider: string | undefined
  /** The current resource's instances' keys and identity values, as the state wrote them. */
  #scratch = new Uint8Array(4096)
  #scratchUsed = 0

  /**
   * With `detail`, the raw attributes of the instances whose address `wanted` accepts go to
   * `onDetail` as each resource ends, and no index is kept. With `onEntries`, each block of the
   * entries goes there once full, and `result` holds only the rest.
   */
  constructor(
    detail?: {
      wanted: (address: string) => boolean
      onDetail: (detail: InstanceDetail) => void
    },
    onEntries?: (block: Uint8Array) => void,
  ) {
    this.#wanted = detail?.wanted
    this.#onDetail = detail?.onDetail
    this.#entries = new EntryWriter(onEntries)
  }

  /** Whether the raw attributes of instances are wanted at all (detail mode). */
  get keepsAttributes(): boolean {
    return this.#onDetail !== undefined
  }

  beginResource(): void {
    this.#fields = newFields()
    this.#sharedParts = undefined
    this.#instances = []
    this.#heldBytes = 0
    this.#scratchUsed = 0
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
    this.#instance = {
      keyFrom: -1,
      keyTo: -1,
      keyKind: KeyKind.None,
      keyJson: undefined,
      deposed: undefined,
      length: -1,
      hash: '',
      identity: undefined,
      sensitive: undefined,
      attributes: undefined,
      attributesTooLarge: false,
    }
  }

  /**
   * An instance field's JSON: `bytes` from `from` to `to`, undefined when too large to read. The
   * bytes are the caller's, and read only during the call.
   */
  instanceField(key: string, bytes: Uint8Array | undefined, from: number, to: number): void {
    const instance = this.#instance
    if (instance === undefined) return
    if (key === 'sensitive_attributes') {
      // Too large to read: every identity value counts as sensitive.
      // Most are `[]`, which an index needs no text of.
      instance.sensitive =
        bytes === undefined
          ? null
          : this.#onDetail === undefined && isEmptyArray(bytes, from, to)
            ? undefined
            : text(bytes, from, to)
      return
    }
    if (bytes === undefined) return
    if (key === 'index_key') {
      // Most keys are a plain string or a small whole number, whose JSON is used as it came.
      const plain = isPlainStringBytes(bytes, from, to)
        ? KeyKind.PlainString
        : isPlainIntegerBytes(bytes, from, to)
          ? KeyKind.Integer
          : KeyKind.None
      if (plain !== KeyKind.None) {
        instance.keyKind = plain
        instance.keyJson = undefined
        instance.keyFrom = this.#keep(bytes, from, to)
        instance.keyTo = this.#scratchUsed
        return
      }
      const value = parse(text(bytes, from, to))
      if (typeof value === 'number' || typeof value === 'string') {
        instance.keyKind = KeyKind.Other
        instance.keyJson = JSON.stringify(value)
      }
      return
    }
    const value = parse(text(bytes, from, to))
    if (key === 'deposed' && typeof value === 'string') instance.deposed = value
  }

  /** An identity attribute's JSON, as `instanceField` takes it. */
  identity(key: string, bytes: Uint8Array | undefined, from: number, to: number): void {
    const instance = this.#instance
    if (bytes === undefined || instance === undefined || bytes[from] !== QUOTE) return
    let value: IdentityValue
    if (isPlainStringBytes(bytes, from, to)) {
      // Its JSON is its own, and its length in UTF-16 units at most its length in bytes.
      if (to - from === 2) return
      if (
        to - from - 2 > MAX_IDENTITY_CHARS &&
        text(bytes, from + 1, to - 1).length > MAX_IDENTITY_CHARS
      ) {
        return
      }
      const at = this.#keep(bytes, from, to)
      value = { name: key, from: at, to: this.#scratchUsed, literal: undefined }
    } else {
      const parsed = parse(text(bytes, from, to))
      if (typeof parsed !== 'string' || parsed.length === 0 || parsed.length > MAX_IDENTITY_CHARS) {
        return
      }
      value = { name: key, from: -1, to: -1, literal: JSON.stringify(parsed) }
    }
    ;(instance.identity ??= []).push(value)
  }

  /**
   * The instance's attributes: their length and hash (the digest, `AttributesDigest`; empty in
   * detail mode), and in detail mode their bytes (or too large).
   */
  attributes(length: number, hash: string, raw: Uint8Array | undefined, tooLarge: boolean): void {
    const instance = this.#instance
    if (instance === undefined) return
    instance.length = length
    instance.hash = hash
    if (raw !== undefined) instance.attributes = raw
    instance.attributesTooLarge = tooLarge
  }

  endInstance(): void {
    const instance = this.#instance
    this.#instance = undefined
    if (instance === undefined || instance.length === -1) return
    if (this.#onDetail !== undefined) {
      // Most states name the resource before its instances: decide now, keep only what is wanted.
      const shared = this.#shared()
      if (shared !== undefined && !(this.#wanted?.(this.#addressOf(shared, instance)) ?? true)) {
        return
      }
      const held = instance.attributes?.length ?? 0
      if (this.#heldBytes + held > MAX_UNDECIDED_ATTRIBUTE_BYTES) {
        instance.attributes = undefined
        instance.attributesTooLarge = true
      } else {
        this.#heldBytes += held
      }
    }
    this.#instances.push(instance)
  }

  /** Whether `entries` more fit in the index (`MAX_INDEXED_INSTANCES`). */
  fits(entries: number): boolean {
    return this.#entries.count + entries <= MAX_INDEXED_INSTANCES
  }

  /** A resource's entries as written elsewhere: `entries` of them, joined by commas. */
  addEntries(bytes: Uint8Array, from: number, to: number, entries: number): void {
    this.#entries.join(bytes, from, to, entries)
    this.#noteResource()
  }

  /**
   * Entries of resources written elsewhere whose modules and providers were noted before:
   * `entries` of them, joined by commas.
   */
  joinEntries(bytes: Uint8Array, entries: number): void {
    this.#entries.join(bytes, 0, bytes.length, entries)
  }

  /** How many entries the index holds. */
  get entryCount(): number {
    return this.#entries.count
  }

  /** A resource could not be read whole: the index lacks it, and says it is incomplete. */
  lose(): void {
    this.#truncated = true
  }

  endResource(): void {
    const { mode, type, name } = this.#fields
    if (
      (mode?.value !== 'managed' && mode?.value !== 'data') ||
      type === undefined ||
      name === undefined
    ) {
      return
    }
    const shared = this.#shared() as SharedParts
    if (this.#onDetail !== undefined) {
      for (const instance of this.#instances) {
        const address = this.#addressOf(shared, instance)
        if (!(this.#wanted?.(address) ?? true)) continue
        this.#onDetail({
          address,
          attributes: instance.attributesTooLarge
            ? undefined
            : instance.attributes === undefined
              ? undefined
              : decoder.decode(instance.attributes),
          // Too large to read: not JSON, so every attribute counts as sensitive.
          sensitive: instance.sensitive === null ? 'unreadable' : instance.sensitive,
        })
      }
    } else {
      for (const instance of this.#instances) {
        if (this.#entries.count >= MAX_INDEXED_INSTANCES) {
          this.#truncated = true
          return
        }
        this.#write(shared, instance)
      }
    }
    this.#noteResource()
  }

  /** Notes the current resource's module and provider. */
  #noteResource(): void {
    const { module, provider } = this.#fields
    if (module.value !== '') this.#modules.add(module.value)
    // Most resources of a state share a few providers.
    if (provider.value === this.#lastProvider) return
    this.#lastProvider = provider.value
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

  /**
   * Writes an instance's entry, an `IndexedInstance`, as `JSON.stringify` writes it: the
   * resource's fields are the same for each instance, and the key and identity values are written
   * as the state wrote them when that is how `JSON.stringify` writes them.
   */
  #write(shared: SharedParts, instance: PartialInstance): void {
    const out = this.#entries
    const scratch = this.#scratch
    out.begin()
    out.bytes(ADDRESS_OPEN, 0, ADDRESS_OPEN.length)
    const kind = instance.keyKind
    if (instance.deposed !== undefined || kind === KeyKind.Other) {
      out.text(JSON.stringify(this.#addressOf(shared, instance)))
    } else {
      out.bytes(shared.prefixJsonBytes, 0, shared.prefixJsonBytes.length)
      if (kind === KeyKind.Integer) {
        out.byte(0x5b)
        out.bytes(scratch, instance.keyFrom, instance.keyTo)
        out.byte(0x5d)
      } else if (kind === KeyKind.PlainString) {
        // `["k"]` inside the address's own JSON: its quotes escaped.
        out.bytes(KEY_OPEN, 0, KEY_OPEN.length)
        out.bytes(scratch, instance.keyFrom + 1, instance.keyTo - 1)
        out.bytes(KEY_CLOSE, 0, KEY_CLOSE.length)
      }
      out.byte(QUOTE)
    }
    out.byte(0x2c)
    out.bytes(shared.fieldsBytes, 0, shared.fieldsBytes.length)
    out.bytes(DIGEST_OPEN, 0, DIGEST_OPEN.length)
    out.base36(instance.length)
    out.byte(0x2d)
    out.text(instance.hash)
    out.byte(QUOTE)
    if (kind === KeyKind.Integer || kind === KeyKind.PlainString) {
      out.bytes(INDEX_KEY_OPEN, 0, INDEX_KEY_OPEN.length)
      out.bytes(scratch, instance.keyFrom, instance.keyTo)
    } else if (kind === KeyKind.Other) {
      out.bytes(INDEX_KEY_OPEN, 0, INDEX_KEY_OPEN.length)
      out.text(instance.keyJson as string)
    }
    if (instance.deposed !== undefined) out.text(`,"deposed":${JSON.stringify(instance.deposed)}`)
    out.bytes(IDENTITY_OPEN, 0, IDENTITY_OPEN.length)
    this.#writeIdentity(instance)
    out.byte(0x7d)
    out.end()
  }

  /** The identity values that no sensitive path covers, ordered by name: a JSON object. */
  #writeIdentity(instance: PartialInstance): void {
    const out = this.#entries
    const values = instance.identity
    const sensitive = values === undefined ? NONE : sensitiveTopNames(instance.sensitive)
    if (values === undefined || sensitive === 'all') {
      out.bytes(EMPTY_OBJECT, 0, EMPTY_OBJECT.length)
      return
    }
    let kept = values
    if (values.length > 1) {
      // A name given twice keeps its last value, as JSON.parse does.
      kept = []
      for (const value of values) {
        const earlier = kept.findIndex((other) => other.name === value.name)
        if (earlier !== -1) kept.splice(earlier, 1)
        kept.push(value)
      }
      kept.sort((a, b) => compare(a.name, b.name))
    }
    out.byte(0x7b)
    let first = true
    for (const value of kept) {
      if (sensitive.has(value.name)) continue
      if (!first) out.byte(0x2c)
      first = false
      const name = nameJson(value.name)
      out.bytes(name, 0, name.length)
      if (value.literal !== undefined) out.text(value.literal)
      else out.bytes(this.#scratch, value.from, value.to)
    }
    out.byte(0x7d)
  }

  /** Copies bytes into the resource's scratch; answers where they start there. */
  #keep(bytes: Uint8Array, from: number, to: number): number {
    const at = this.#scratchUsed
    const end = at + (to - from)
    if (end > this.#scratch.length) {
      const grown = new Uint8Array(Math.max(end, this.#scratch.length * 2))
      grown.set(this.#scratch.subarray(0, at))
      this.#scratch = grown
    }
    const scratch = this.#scratch
    for (let k = from, out = at; k < to; k += 1, out += 1) scratch[out] = bytes[k] as number
    this.#scratchUsed = end
    return at
  }

  /** An instance's address: its resource's, then its key, then whether it is deposed. */
  #addressOf(shared: SharedParts, instance: PartialInstance): string {
    let address = shared.prefix
    const kind = instance.keyKind
    if (kind === KeyKind.Other) address += `[${instance.keyJson as string}]`
    else if (kind !== KeyKind.None) {
      address += `[${text(this.#scratch, instance.keyFrom, instance.keyTo)}]`
    }
    if (instance.deposed !== undefined) address += ` (deposed ${instance.deposed})`
    return address
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
    const prefixJson = JSON.stringify(prefix).slice(0, -1)
    return (this.#sharedParts = {
      prefix,
      prefixJson,
      prefixJsonBytes: encoder.encode(prefixJson),
      fieldsBytes: encoder.encode(
        `"module":${module.json},${modeJson}"type":${type.json},"name":${name.json},"provider":${provider.json}`,
      ),
    })
  }
}

const ADDRESS_OPEN = encoder.encode('{"address":')
const KEY_OPEN = encoder.encode('[\\"')
const KEY_CLOSE = encoder.encode('\\"]')
const DIGEST_OPEN = encoder.encode(',"digest":"')
const INDEX_KEY_OPEN = encoder.encode(',"index_key":')
const IDENTITY_OPEN = encoder.encode(',"identity":')
const EMPTY_OBJECT = encoder.encode('{}')
const BASE36 = encoder.encode('0123456789abcdefghijklmnopqrstuvwxyz')

const NAME_JSON = new Map<string, Uint8Array>()

/** `"name":` as UTF-8, for an identity attribute's name (one of a few). */
function nameJson(name: string): Uint8Array {
  let json = NAME_JSON.get(name)
  if (json === undefined) NAME_JSON.set(name, (json = encoder.encode(`${JSON.stringify(name)}:`)))
  return json
}

/** Whether `bytes[from, to)` is a string literal without escapes: then it is its own JSON. */
function isPlainStringBytes(bytes: Uint8Array, from: number, to: number): boolean {
  if (to - from < 2 || bytes[from] !== QUOTE || bytes[to - 1] !== QUOTE) return false
  for (let at = from + 1; at < to - 1; at += 1) if (bytes[at] === BACKSLASH) return false
  return true
}

/**
 * Whether `bytes[from, to)` is a whole number written as `JSON.stringify` writes it (no sign,
 * exponent or leading zero), short enough to be exact.
 */
function isPlainIntegerBytes(bytes: Uint8Array, from: number, to: number): boolean {
  const length = to - from
  if (length === 0 || length > 15) return false
  const first = bytes[from] as number
  if (first < 0x30 || first > 0x39 || (first === 0x30 && length > 1)) return false
  for (let at = from + 1; at < to; at += 1) {
    const c = bytes[at] as number
    if (c < 0x30 || c > 0x39) return false
  }
  return true
}

/** Whether `bytes[from, to)` is `[]`, the `sensitive_attributes` of most instances. */
function isEmptyArray(bytes: Uint8Array, from: number, to: number): boolean {
  return to - from === 2 && bytes[from] === 0x5b && bytes[from + 1] === 0x5d
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
 * Entries written out as UTF-8 as they are made, joined by commas, straight into blocks of bytes:
 * a hundred thousand entries make no string each.
 * The blocks are their own memory (never a pooled slab), so the scan thread can hand them over
 * whole; with `onBlock`, each as soon as it is full (the index is then stored as the body streams).
 */
class EntryWriter {
  readonly #blocks: Buffer[] = []
  readonly #onBlock: ((block: Uint8Array) => void) | undefined
  #block = Buffer.allocUnsafeSlow(16 * 1024)
  #used = 0
  /** Whether a block was filled: the next ones are larger. */
  #filled = false
  count = 0

  constructor(onBlock?: (block: Uint8Array) => void) {
    this.#onBlock = onBlock
  }

  /** Starts an entry, after a comma when any were written before. */
  begin(): void {
    if (this.count !== 0) this.byte(0x2c)
  }

  /** Ends the entry begun last. */
  end(): void {
    this.count += 1
  }

  /** Adds `entries` entries written elsewhere, joined by commas. */
  join(source: Uint8Array, from: number, to: number, entries: number): void {
    if (entries === 0) return
    if (this.count !== 0) this.byte(0x2c)
    this.bytes(source, from, to)
    this.count += entries
  }

  byte(value: number): void {
    this.#room(1)
    this.#block[this.#used++] = value
  }

  bytes(source: Uint8Array, from: number, to: number): void {
    const length = to - from
    this.#room(length)
    const block = this.#block
    let at = this.#used
    if (length > 16) {
      block.set(source.subarray(from, to), at)
      at += length
    } else {
      for (let k = from; k < to; k += 1) block[at++] = source[k] as number
    }
    this.#used = at
  }

  /** Any text, as UTF-8. */
  text(value: string): void {
    // UTF-8 takes at most three bytes for each UTF-16 unit.
    this.#room(value.length * 3)
    this.#used += this.#block.write(value, this.#used)
  }

  /** A whole number in base 36 (`writeBase36`). */
  base36(n: number): void {
    this.#room(11)
    this.#used = writeBase36(this.#block, this.#used, n)
  }

  /** The entries, in blocks that are each their own memory (none shared with a pool). */
  blocks(): Uint8Array[] {
    const blocks = [...this.#blocks]
    if (this.#used !== 0) blocks.push(this.#block.subarray(0, this.#used))
    return blocks
  }

  /**
   * Makes room for `most` more bytes in the current block, or starts the next: an entry may run
   * from one block into the next, since blocks are joined as they are. Small at first, a MiB once
   * large.
   */
  #room(most: number): void {
    if (this.#used + most <= this.#block.length) return
    if (this.#used !== 0) {
      const full = this.#block.subarray(0, this.#used)
      if (this.#onBlock === undefined) this.#blocks.push(full)
      else this.#onBlock(full)
      this.#filled = true
    }
    const size = this.#filled ? MiB : 256 * 1024
    this.#block = Buffer.allocUnsafeSlow(Math.max(size, most))
    this.#used = 0
  }
}

const MiB = 1024 * 1024

/**
 * Writes `n.toString(36)` for a whole number from 0 to 2^53-1 (at most 11 digits) as ASCII at
 * `at`, and answers where it ends: the engine's radix conversion takes the path made for fractions.
 */
export function writeBase36(bytes: Uint8Array, at: number, n: number): number {
  if (n < 36) {
    bytes[at] = BASE36[n] as number
    return at + 1
  }
  let digits = 0
  for (let left = n; left > 0; left = Math.floor(left / 36)) digits += 1
  for (let left = n, digit = at + digits - 1; left > 0; digit -= 1) {
    const quotient = Math.floor(left / 36)
    bytes[digit] = BASE36[left - quotient * 36] as number
    left = quotient
  }
  return at + digits
}

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

/** `bytes[from, to)` as text. */
function text(bytes: Uint8Array, from: number, to: number): string {
  return decoder.decode(bytes.subarray(from, to))
}
