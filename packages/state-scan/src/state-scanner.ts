import {
  IDENTITY_FIELDS,
  INSTANCE_FIELDS,
  InstanceCollector,
  RESOURCE_FIELDS,
  type CollectedResources,
  type InstanceDetail,
} from './instance-collector'
import { giveJsonScan, scanError, takeJsonScan, type JsonScan } from './json-scan'
import { StateScanError } from './scan-error'
import {
  ATTRIBUTE_KEYS,
  EVENT_END,
  EVENT_KEY,
  EVENT_RESOURCE_END,
  EVENT_START,
  INDEX_KEYS,
  INSTANCE_ELEMENTS,
  INSTANCE_KEYS,
  MAX_FIELD_BYTES,
  MAX_SENSITIVE_BYTES,
  RESOURCE_ELEMENTS,
  RESOURCE_FIELD_COUNT,
  RESOURCE_KEYS,
  SLICE,
  TOP_KEYS,
} from './wasm-constants'

/**
 * What one pass over a state body learns: that it is JSON at all, and the Terraform header fields
 * (`version`, `serial`, `lineage`, `terraform_version`, `outputs`) when it is a Terraform state.
 */
export interface ScannedState {
  /** Set when the body is a Terraform state: a top-level object with version, serial and lineage. */
  terraform?: TerraformHeader
  /** The raw JSON of the top-level `outputs` value, when present and no larger than the cap. */
  outputs?: Uint8Array
  /** True when `outputs` was present but larger than the cap, so it was not kept. */
  outputsTooLarge: boolean
  /** Byte offsets of the top-level `serial` value, so a restore can rewrite it while streaming. */
  serialSpan?: { start: number; end: number }
  /**
   * The resources, when the scanner was asked to index and the body is a readable Terraform state
   * (format 4); otherwise why there is no index.
   */
  resources?: CollectedResources | { none: string }
  /**
   * Set when the body is a state OpenTofu encrypted on the client (a top-level
   * `encryption_version` beside `encrypted_data`): the format, and the `serial` and `lineage`
   * OpenTofu keeps in plain text beside the ciphertext, when they are there.
   */
  clientEncrypted?: ClientEncryptedHeader
}

/** What a backend can read of an OpenTofu state encrypted on the client. */
export interface ClientEncryptedHeader {
  /** `encryption_version`: `v0` today. */
  encryptionVersion: string
  serial?: number
  lineage?: string
}

/** What a scanner is asked to do besides checking the JSON. */
export interface ScanOptions {
  /** Index the state's resources (`ScannedState.resources`). */
  index?: boolean
  /**
   * Follow the resources in this script rather than in the byte loop: slower, and the same index
   * (a test checks that the two agree).
   */
  indexInScript?: boolean
  /**
   * Hand the raw attributes of the instances `wanted` accepts to `onDetail` (an attribute-level
   * diff), keeping no index.
   */
  detail?: { wanted: (address: string) => boolean; onDetail: (detail: InstanceDetail) => void }
  /**
   * With `index`, hand each block of the index's entries here as soon as it is full: the result's
   * `resources` then holds only the blocks after them.
   */
  onEntries?: (block: Uint8Array) => void
}

export interface TerraformHeader {
  version: number
  serial: number
  lineage: string
  terraformVersion?: string
}

/** The largest `outputs` value kept for later use (status digests, TFE outputs). */
export const MAX_OUTPUTS_BYTES = 16 * 1024 * 1024
/** The largest scalar header value kept (a serial, lineage or version string). */
const MAX_SCALAR_BYTES = 1024
/** The largest `attributes` kept for a detailed diff. */
const MAX_DETAIL_ATTRIBUTES_BYTES = 1024 * 1024

/** Why a state OpenTofu encrypted on the client has no index (and no diff, search or outputs). */
export const CLIENT_ENCRYPTED =
  'client_encrypted: OpenTofu encrypted the state on the client, so only its serial and lineage can be read'

const INTERESTING = new Set([
  'version',
  'serial',
  'lineage',
  'terraform_version',
  'outputs',
  'encryption_version',
])

interface Capture {
  key: string
  start: number
  limit: number
  chunks: Uint8Array[]
  size: number
  overflow: boolean
  /** Where capture resumes in the current chunk. */
  from: number
}

/**
 * A value being watched, from where it starts to where it ends at the same depth: a value kept
 * (`keep`: a top-level header value, a resource or instance field, an identity attribute), or a
 * region of the `resources` tree whose insides are watched in turn.
 */
type WatchKind =
  | 'top'
  | 'resourceField'
  | 'instanceField'
  | 'identity'
  | 'resources'
  | 'resource'
  | 'instances'
  | 'instance'
  | 'attributes'

/**
 * The depths (bits) whose object keys are read (`keys`) and whose value starts are watched
 * (`starts`), and the depth at which the innermost watch ends (`end`, -1 when none is open). One
 * plain object the byte loop reads, so its checks stay cheap field loads.
 */
interface Watched {
  keys: number
  starts: number
  end: number
}

/**
 * An instance's attributes, read here as they stream past (in a detailed diff, or with
 * `indexInScript`): their length, and for an index their digest, taken by the byte loop's
 * hash (`AttributesDigest`); with the index, the byte loop takes it itself. It tells changed
 * from unchanged in a diff, which then reads the values themselves when asked for detail.
 */
interface Hashing {
  /** Whether the attributes are digested (for an index; a detailed diff needs their bytes). */
  digest: boolean
  length: number
  from: number
  /** The attributes' bytes too, for a detailed diff. */
  keep: Capture | undefined
}

/**
 * A streaming JSON validator that reads a document chunk by chunk, holding only the nesting stack
 * and the few top-level values it keeps, whatever the document's size. It accepts exactly RFC 8259
 * JSON (one value, optional surrounding white space) and throws `StateScanError` otherwise.
 *
 * The byte loop runs in WebAssembly (`JsonScan`), which reports the keys and values of the
 * levels watched here (the top level; with an index, the `resources` tree) as events: the rest of
 * a state, most of its bytes, is only checked, sixteen bytes at a time where it can be.
 */
export class StateScanner {
  readonly #json: JsonScan
  #offset = 0
  #capture: Capture | undefined
  #captured = new Map<string, { bytes: Uint8Array | undefined; start: number; end: number }>()
  readonly #watched: Watched = { keys: 1 << TOP_KEYS, starts: 0, end: -1 }
  /** The watch a value starting at a key's depth begins, set when that key ends. */
  #pending: WatchKind | undefined
  #pendingKey = ''
  /** The open watches, innermost last: what each watches, and the depth at which it ends. */
  readonly #watchKinds: WatchKind[] = []
  readonly #watchDepths: number[] = []
  /** The capture of a resource's or an instance's field, reused from one field to the next. */
  readonly #fieldCapture: Capture = newCapture('', 0, 0, 0)
  #hashing: Hashing | undefined
  /** The one `Hashing` an instance's attributes use, reused from one instance to the next. */
  readonly #hashSlot: Hashing = { digest: false, length: 0, from: 0, keep: undefined }
  readonly #collector: InstanceCollector | undefined
  /**
   * The memory of the current chunk as a Buffer, to read captured text from (when indexing), and
   * where the chunk starts in it. Chunks that are views of one buffer (the scan thread's ring)
   * share one.
   */
  #view: Buffer | undefined
  #viewStart = 0
  #encrypted = false
  /**
   * Set once the document is done, refused or ended: its scan has been given back, and what this
   * throws if used again.
   */
  #finished: Error | undefined
  /** Whether the byte loop follows the resources for the index (all but a detailed diff). */
  readonly #indexing: boolean

  constructor(options: ScanOptions = {}) {
    if (options.index === true || options.detail !== undefined) {
      this.#collector = new InstanceCollector(options.detail, options.onEntries)
    }
    this.#indexing =
      options.detail === undefined && options.index === true && options.indexInScript !== true
    // Here only the top level is watched. For an index, the byte loop follows the resources
    // itself; for a detailed diff (or `indexInScript`), the `resources` tree is watched here,
    // down to the keys of each instance's attributes: only the keys watched for are reported,
    // and the elements of `resources` and of each resource's `instances`.
    this.#json = takeJsonScan(
      this.#collector === undefined || this.#indexing
        ? { deepest: TOP_KEYS, shapes: KEY_SHAPES, elements: 0, index: this.#indexing }
        : {
            deepest: ATTRIBUTE_KEYS,
            shapes: KEY_SHAPES,
            elements: (1 << RESOURCE_ELEMENTS) | (1 << INSTANCE_ELEMENTS),
            index: false,
          },
    )
  }

  /** Feeds the next chunk. @throws StateScanError at the first byte that is not JSON. */
  write(chunk: Uint8Array): void {
    if (this.#finished !== undefined) throw this.#finished
    try {
      this.#write(chunk)
    } catch (error) {
      // A refused document is done: its scan is free for the next, and this one answers no more.
      this.#finished = error instanceof Error ? error : new Error('the scan failed')
      giveJsonScan(this.#json)
      throw error
    }
  }

  #write(chunk: Uint8Array): void {
    // Resource fields are read from the chunk as text only when this follows the resources.
    if (this.#collector !== undefined && !this.#indexing) this.#viewOf(chunk)
    if (this.#capture !== undefined) this.#capture.from = 0
    if (this.#hashing !== undefined) {
      this.#hashing.from = 0
      if (this.#hashing.keep !== undefined) this.#hashing.keep.from = 0
    }
    const json = this.#json
    for (let base = 0; base < chunk.length; base += SLICE) {
      const length = Math.min(SLICE, chunk.length - base)
      json.input.set(chunk.subarray(base, base + length))
      let at = 0
      do {
        at = json.scan(at, length)
        // What came before a refused byte is taken first: a duplicate key before it is the error.
        this.#take(chunk, base)
        if (at < 0) {
          const { code, at: where } = json.error()
          throw scanError(code, this.#offset + base + where, false)
        }
      } while (at < length)
    }
    this.#endChunk(chunk)
  }

  /** The events of the last scan of the slice of `chunk` from `base`. */
  #take(chunk: Uint8Array, base: number): void {
    const json = this.#json
    const events = json.events
    const count = json.eventCount()
    const watched = this.#watched
    for (let k = 0; k < count * 4; k += 4) {
      const head = events[k] as number
      const depth = head >> 8
      const at = base + (events[k + 1] as number)
      switch (head & 0xff) {
        case EVENT_START:
          if (((watched.starts >>> depth) & 1) !== 0) {
            this.#startWatch(at, depth, events[k + 2] as number)
          }
          break
        case EVENT_END:
          if (depth === watched.end) this.#endWatch(chunk, at)
          break
        case EVENT_KEY:
          if (((watched.keys >>> depth) & 1) !== 0) {
            this.#endKey(depth, json.keys, k * 8, events[k + 2] as number, events[k + 3] === 1)
          }
          break
        case EVENT_RESOURCE_END:
          // The entries written before it come first.
          this.#takeEntries()
          this.#indexResource(events[k + 2] as number, events[k + 3] as number)
          json.takeEntries((this.#collector as InstanceCollector).entryCount)
          break
      }
    }
  }

  /** Takes the entries the byte loop wrote without stopping, into the index. */
  #takeEntries(): void {
    const json = this.#json
    const { bytes, count } = json.entries()
    if (count === 0) return
    const collector = this.#collector as InstanceCollector
    collector.joinEntries(bytes, count)
    json.takeEntries(collector.entryCount)
  }

  /**
   * A resource has ended, whose pieces the byte loop kept: its `count` instances' entries are
   * written there when it can, and here from those pieces when not. `kept` is 1 when its pieces
   * outgrew the room the byte loop has for them (the index lacks this resource), 2 when it had
   * more instances than the loop keeps records of (more than an index holds: the first are
   * indexed, and the index says it is incomplete).
   */
  #indexResource(count: number, kept: number): void {
    const collector = this.#collector as InstanceCollector
    if (kept === 1) {
      collector.lose()
      return
    }
    if (kept === 2) collector.lose()
    const json = this.#json
    const field = (number: number) => {
      const { at, length } = json.field(number)
      if (length === -1) return
      const text = length < 0 ? undefined : decode(json.bytes.subarray(at, at + length))
      collector.resourceField(INDEX_KEYS.resource[number] as string, text)
    }
    let digests = 0
    for (let n = 0; n < count; n += 1) if (json.hasDigest(n)) digests += 1
    const written = collector.fits(digests) ? json.writeEntries() : undefined
    collector.beginResource()
    if (written !== undefined) {
      // The entries hold the other fields; the index lists modules and providers.
      field(MODULE_FIELD)
      field(PROVIDER_FIELD)
      collector.addEntries(json.bytes, written.at, written.at + written.length, digests)
      return
    }
    for (let number = 0; number < RESOURCE_FIELD_COUNT; number += 1) field(number)
    for (let n = 0; n < count; n += 1) {
      collector.beginInstance()
      for (let field = 0; field < 3; field += 1) {
        const { at, length } = json.instanceField(n, field)
        if (length === -1) continue
        const key = INDEX_KEYS.instance[field] as string
        collector.instanceField(key, length < 0 ? undefined : json.bytes, at, at + length)
      }
      for (const { name, at, length } of json.identities(n)) {
        collector.identity(INDEX_KEYS.identity[name] as string, json.bytes, at, at + length)
      }
      const digest = json.digest(n)
      if (digest !== undefined) collector.attributes(digest.length, digest.hash, undefined, false)
      collector.endInstance()
    }
    collector.endResource()
  }

  /** Keeps the part of the chunk the open captures hold, and where the next one starts. */
  #endChunk(chunk: Uint8Array): void {
    const length = chunk.length
    const capture = this.#capture
    if (capture !== undefined) this.#keepCaptured(chunk, capture, length)
    if (this.#hashing !== undefined) this.#hashTo(chunk, length)
    this.#offset += length
  }

  /** Ends the document. @throws StateScanError if it is empty or incomplete. */
  end(): ScannedState {
    if (this.#finished !== undefined) throw this.#finished
    const json = this.#json
    const code = json.finish()
    if (code === 0 && this.#indexing) this.#takeEntries()
    // The document is done either way: its scan is free for the next.
    giveJsonScan(json)
    this.#finished =
      code === 0
        ? new Error('the state scanner was used after its end')
        : scanError(code, this.#offset, this.#offset === 0)
    if (code !== 0) throw this.#finished
    return this.#result()
  }

  /**
   * A key of a watched depth has ended: its first bytes are `length` bytes of `bytes` from
   * `from` (unless `overflow`, when it is long or has escapes). Chooses what watches the value
   * that follows it.
   */
  #endKey(depth: number, bytes: Uint8Array, from: number, length: number, overflow: boolean): void {
    // Most keys are attributes' names, and most are no identity name: tell by length and first
    // byte, before any hashing.
    const known =
      overflow || length > 31 || (KEY_SHAPES[depth]?.[length] ?? 0) === 0
        ? undefined
        : (KEY_SHAPES[depth]?.[length] ?? 0) & firstByteBit(bytes[from] as number)
          ? knownKey(depth, bytes, from, length)
          : undefined
    let kind: WatchKind | undefined
    if (known !== undefined) {
      if (known.kind === 'encrypted') this.#encrypted = true
      else if (
        depth !== TOP_KEYS ||
        known.kind === 'top' ||
        (this.#collector !== undefined && !this.#indexing)
      ) {
        kind = known.kind
      }
    }
    this.#pending = kind
    this.#pendingKey = known?.key ?? ''
    if (kind === undefined) this.#watched.starts &= ~(1 << depth)
    else this.#watched.starts |= 1 << depth
  }

  /** A value starts at a watched depth (`c` is its first byte, at `i`). */
  #startWatch(i: number, depth: number, c: number): void {
    if (depth === RESOURCE_ELEMENTS || depth === INSTANCE_ELEMENTS) {
      // An element of `resources` or of a resource's `instances`.
      if (c !== 0x7b) return
      const collector = this.#collector as InstanceCollector
      if (depth === RESOURCE_ELEMENTS) {
        collector.beginResource()
        this.#watched.keys |= 1 << RESOURCE_KEYS
        this.#open('resource', depth)
      } else {
        collector.beginInstance()
        this.#watched.keys |= 1 << INSTANCE_KEYS
        this.#open('instance', depth)
      }
      return
    }
    const kind = this.#pending
    if (kind === undefined) return
    this.#pending = undefined
    this.#watched.starts &= ~(1 << depth)
    switch (kind) {
      case 'resources':
      case 'instances':
        if (c !== 0x5b) return
        this.#watched.starts |= 1 << (depth + 1)
        this.#open(kind, depth)
        return
      case 'attributes':
        if (c !== 0x7b) return
        this.#watched.keys |= 1 << ATTRIBUTE_KEYS
        {
          const hashing = this.#hashSlot
          const detail = this.#collector?.keepsAttributes === true
          hashing.digest = !detail
          hashing.length = 0
          hashing.from = i
          hashing.keep = detail
            ? newCapture('', this.#offset + i, MAX_DETAIL_ATTRIBUTES_BYTES, i)
            : undefined
          if (hashing.digest) this.#json.digestBegin()
          this.#hashing = hashing
        }
        this.#open(kind, depth)
        return
      default: {
        const limit =
          kind === 'top'
            ? this.#pendingKey === 'outputs'
              ? MAX_OUTPUTS_BYTES
              : MAX_SCALAR_BYTES
            : kind === 'instanceField' && this.#pendingKey === 'sensitive_attributes'
              ? MAX_SENSITIVE_BYTES
              : MAX_FIELD_BYTES
        this.#capture =
          kind === 'top'
            ? newCapture(this.#pendingKey, this.#offset + i, limit, i)
            : resetCapture(this.#fieldCapture, this.#pendingKey, this.#offset + i, limit, i)
        this.#open(kind, depth)
      }
    }
  }

  #open(kind: WatchKind, depth: number): void {
    this.#watchKinds.push(kind)
    this.#watchDepths.push(depth)
    this.#watched.end = depth
  }

  /** The innermost watched value has ended, before byte `i` of `chunk`. */
  #endWatch(chunk: Uint8Array, i: number): void {
    const kind = this.#watchKinds.pop() as WatchKind
    this.#watchDepths.pop()
    const depths = this.#watchDepths
    this.#watched.end = depths.length === 0 ? -1 : (depths[depths.length - 1] as number)
    const collector = this.#collector
    switch (kind) {
      case 'resources':
        this.#watched.starts &= ~(1 << RESOURCE_ELEMENTS)
        return
      case 'instances':
        this.#watched.starts &= ~(1 << INSTANCE_ELEMENTS)
        return
      case 'resource':
        this.#watched.keys &= ~(1 << RESOURCE_KEYS)
        this.#watched.starts &= ~(1 << RESOURCE_KEYS)
        collector?.endResource()
        return
      case 'instance':
        this.#watched.keys &= ~(1 << INSTANCE_KEYS)
        this.#watched.starts &= ~(1 << INSTANCE_KEYS)
        collector?.endInstance()
        return
      case 'attributes': {
        this.#watched.keys &= ~(1 << ATTRIBUTE_KEYS)
        this.#watched.starts &= ~(1 << ATTRIBUTE_KEYS)
        const hashing = this.#hashing as Hashing
        this.#hashTo(chunk, i)
        this.#hashing = undefined
        const keep = hashing.keep
        collector?.attributes(
          hashing.length,
          hashing.digest ? this.#json.digestEnd() : '',
          keep === undefined || keep.overflow ? undefined : joined(keep),
          keep?.overflow === true,
        )
        return
      }
      default:
        break
    }
    const capture = this.#capture as Capture
    this.#capture = undefined
    if (kind === 'resourceField') {
      collector?.resourceField(capture.key, this.#captureText(chunk, capture, i))
      return
    }
    if (kind !== 'top') {
      // An instance's values are read as bytes, most where they lie in the chunk.
      let bytes: Uint8Array | undefined = chunk
      let from = capture.from
      let to = i
      if (capture.size !== 0 || capture.overflow || to - from > capture.limit) {
        this.#keepCaptured(chunk, capture, i)
        bytes = capture.overflow ? undefined : joined(capture)
        from = 0
        to = bytes?.length ?? 0
      }
      if (kind === 'instanceField') collector?.instanceField(capture.key, bytes, from, to)
      else collector?.identity(capture.key, bytes, from, to)
      return
    }
    this.#keepCaptured(chunk, capture, i)
    const bytes = capture.overflow ? undefined : joined(capture)
    if (this.#captured.has(capture.key)) {
      this.#fail(i, `duplicate top-level key "${capture.key}"`)
    }
    this.#captured.set(capture.key, { bytes, start: capture.start, end: this.#offset + i })
  }

  /**
   * The text of a resource's or an instance's value that ends before byte `i` of `chunk`, or
   * undefined when larger than its capture's limit. Most lie within one chunk and are read from
   * it as they are, without a copy.
   */
  #captureText(chunk: Uint8Array, capture: Capture, i: number): string | undefined {
    if (capture.size === 0 && !capture.overflow && i - capture.from <= capture.limit) {
      const start = this.#viewStart
      return (this.#view as Buffer).toString('utf8', start + capture.from, start + i)
    }
    this.#keepCaptured(chunk, capture, i)
    return capture.overflow ? undefined : decode(joined(capture))
  }

  /** Reads the attributes' bytes up to `to` in the current chunk (digests or keeps them). */
  #hashTo(chunk: Uint8Array, to: number): void {
    const hashing = this.#hashing as Hashing
    if (to > hashing.from) {
      if (hashing.digest) this.#json.digestUpdate(chunk, hashing.from, to)
      hashing.length += to - hashing.from
    }
    hashing.from = to
    const keep = hashing.keep
    if (keep === undefined || keep.overflow || to <= keep.from) return
    keep.size += to - keep.from
    if (keep.size > keep.limit) {
      keep.overflow = true
      keep.chunks = []
      return
    }
    keep.chunks.push(copyOf(chunk, keep.from, to))
    keep.from = to
  }

  #viewOf(chunk: Uint8Array): void {
    if (chunk instanceof Buffer) {
      this.#view = chunk
      this.#viewStart = 0
      return
    }
    if (this.#view?.buffer !== chunk.buffer) this.#view = Buffer.from(chunk.buffer)
    this.#viewStart = chunk.byteOffset
  }

  #keepCaptured(chunk: Uint8Array, capture: Capture, to: number): void {
    const from = capture.from
    if (capture.overflow || to <= from) return
    capture.size += to - from
    if (capture.size > capture.limit) {
      capture.overflow = true
      capture.chunks = []
      return
    }
    capture.chunks.push(copyOf(chunk, from, to))
    capture.from = to
  }

  #fail(i: number, reason: string): never {
    throw new StateScanError(`not JSON: ${reason} at byte ${this.#offset + i}`)
  }

  #result(): ScannedState {
    const outputs = this.#captured.get('outputs')
    const result: ScannedState = {
      outputsTooLarge: outputs !== undefined && outputs.bytes === undefined,
    }
    if (outputs?.bytes !== undefined) result.outputs = outputs.bytes
    const serial = this.#captured.get('serial')
    const lineage = this.#captured.get('lineage')
    const version = this.#captured.get('version')
    const sealed = this.#clientEncrypted(serial?.bytes, lineage?.bytes)
    if (sealed !== undefined) {
      result.clientEncrypted = sealed
      if (this.#collector !== undefined) result.resources = { none: CLIENT_ENCRYPTED }
      return result
    }
    if (serial === undefined || lineage === undefined || version === undefined) {
      if (this.#collector !== undefined) {
        result.resources = {
          none: this.#encrypted
            ? 'the state is encrypted'
            : 'the body is not a Terraform state (it has no version, serial and lineage)',
        }
      }
      return result
    }
    result.terraform = {
      version: parseHeaderNumber(version.bytes, 'version'),
      serial: parseSerial(serial.bytes),
      lineage: parseLineage(lineage.bytes),
    }
    const terraformVersion = this.#captured.get('terraform_version')?.bytes
    if (terraformVersion !== undefined) {
      const parsed: unknown = JSON.parse(decode(terraformVersion))
      if (typeof parsed === 'string') result.terraform.terraformVersion = parsed
    }
    result.serialSpan = { start: serial.start, end: serial.end }
    if (this.#collector !== undefined) result.resources = this.#resourcesOf(result.terraform)
    return result
  }

  /**
   * The header of an OpenTofu state encrypted on the client, when the body is one: its serial and
   * lineage are read as a Terraform state's are (and refused as theirs are when malformed).
   */
  #clientEncrypted(
    serial: Uint8Array | undefined,
    lineage: Uint8Array | undefined,
  ): ClientEncryptedHeader | undefined {
    const format = this.#captured.get('encryption_version')?.bytes
    if (!this.#encrypted || format === undefined) return undefined
    const parsed: unknown = JSON.parse(decode(format))
    if (typeof parsed !== 'string') return undefined
    return {
      encryptionVersion: parsed,
      ...(serial === undefined ? {} : { serial: parseSerial(serial) }),
      ...(lineage === undefined ? {} : { lineage: parseLineage(lineage) }),
    }
  }

  #resourcesOf(header: TerraformHeader): CollectedResources | { none: string } {
    if (this.#encrypted) return { none: 'the state is encrypted' }
    if (header.version !== 4) {
      return { none: `state format ${header.version} is not indexed (format 4 is)` }
    }
    return (this.#collector as InstanceCollector).result()
  }
}

function parseHeaderNumber(bytes: Uint8Array | undefined, field: string): number {
  const value: unknown = bytes === undefined ? undefined : JSON.parse(decode(bytes))
  if (typeof value !== 'number') throw new StateScanError(`"${field}" must be a number`)
  return value
}

function parseSerial(bytes: Uint8Array | undefined): number {
  const text = bytes === undefined ? '' : decode(bytes)
  const serial = Number(text)
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(serial)) {
    throw new StateScanError('"serial" must be a whole number from 0 to 2^53-1')
  }
  return serial
}

function parseLineage(bytes: Uint8Array | undefined): string {
  const value: unknown = bytes === undefined ? undefined : JSON.parse(decode(bytes))
  if (typeof value !== 'string' || value === '') {
    throw new StateScanError('"lineage" must be a non-empty string')
  }
  return value
}

/** The numbers of a resource's module and provider in `INDEX_KEYS.resource`. */
const MODULE_FIELD = INDEX_KEYS.resource.indexOf('module')
const PROVIDER_FIELD = INDEX_KEYS.resource.indexOf('provider')

/** A key the scanner watches for at one depth, and what watches its value. */
interface KnownKey {
  key: string
  bytes: Uint8Array
  kind: WatchKind | 'encrypted'
}

/**
 * The keys watched at each depth, by a hash of their bytes: most keys of a state are none of
 * these, and telling so from the bytes makes no string.
 */
const KNOWN_KEYS: Map<number, KnownKey[]>[] = (() => {
  const tables: Map<number, KnownKey[]>[] = []
  const add = (depth: number, keys: Iterable<string>, kind: KnownKey['kind']) => {
    const table = (tables[depth] ??= new Map())
    for (const key of keys) {
      const bytes = new TextEncoder().encode(key)
      const hash = keyHash(bytes, 0, bytes.length)
      table.set(hash, [...(table.get(hash) ?? []), { key, bytes, kind }])
    }
  }
  add(TOP_KEYS, INTERESTING, 'top')
  add(TOP_KEYS, ['resources'], 'resources')
  add(TOP_KEYS, ['encrypted_data'], 'encrypted')
  add(RESOURCE_KEYS, RESOURCE_FIELDS, 'resourceField')
  add(RESOURCE_KEYS, ['instances'], 'instances')
  add(INSTANCE_KEYS, INSTANCE_FIELDS, 'instanceField')
  add(INSTANCE_KEYS, ['attributes'], 'attributes')
  add(ATTRIBUTE_KEYS, IDENTITY_FIELDS, 'identity')
  return tables
})()

/** One of 32 buckets of a key's first byte (letters fold onto their case). */
function firstByteBit(byte: number): number {
  return 1 << (byte & 31)
}

/**
 * For each depth and key length, the first-byte buckets (`firstByteBit`) of the watched keys of
 * that length: a key whose shape matches none is passed over without a lookup.
 */
const KEY_SHAPES: number[][] = KNOWN_KEYS.map((table) => {
  const shapes: number[] = Array.from({ length: 32 }, () => 0)
  for (const candidates of table.values()) {
    for (const { bytes } of candidates) {
      shapes[bytes.length] = (shapes[bytes.length] ?? 0) | firstByteBit(bytes[0] as number)
    }
  }
  return shapes
})

function keyHash(bytes: Uint8Array, from: number, length: number): number {
  let hash = length
  for (let at = from; at < from + length; at += 1) {
    hash = (Math.imul(hash, 31) + (bytes[at] as number)) | 0
  }
  return hash
}

/** The watched key that `length` bytes of `bytes` from `from` spell at `depth`, if any. */
function knownKey(
  depth: number,
  bytes: Uint8Array,
  from: number,
  length: number,
): KnownKey | undefined {
  const candidates = KNOWN_KEYS[depth]?.get(keyHash(bytes, from, length))
  if (candidates === undefined) return undefined
  search: for (const candidate of candidates) {
    if (candidate.bytes.length !== length) continue
    for (let at = 0; at < length; at += 1) {
      if (candidate.bytes[at] !== bytes[from + at]) continue search
    }
    return candidate
  }
  return undefined
}

/**
 * A copy of `chunk[from, to)`. Not `chunk.slice`: on a Buffer that is a view, and the caller may
 * fill the same memory with its next chunk (a stream's pooled buffer, the scan thread's ring).
 */
function copyOf(chunk: Uint8Array, from: number, to: number): Uint8Array {
  return Uint8Array.prototype.slice.call(chunk, from, to)
}

/** A capture's bytes in one piece: most values are in one chunk, which is then used as it is. */
function joined(capture: Capture): Uint8Array {
  const { chunks } = capture
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, capture.size)
}

function newCapture(key: string, start: number, limit: number, from: number): Capture {
  return { key, start, limit, chunks: [], size: 0, overflow: false, from }
}

/** `capture`, made ready to capture another value. */
function resetCapture(
  capture: Capture,
  key: string,
  start: number,
  limit: number,
  from: number,
): Capture {
  capture.key = key
  capture.start = start
  capture.limit = limit
  if (capture.chunks.length !== 0) capture.chunks = []
  capture.size = 0
  capture.overflow = false
  capture.from = from
  return capture
}

const decoder = new TextDecoder()

function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes)
}
