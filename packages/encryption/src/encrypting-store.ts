import {
  bodyOf,
  checkRange,
  RangeNotSatisfiableError,
  type Body,
  type GetOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from '@cairn/core'
import {
  EnvelopeError,
  envelopeStart,
  isEnvelope,
  MAGIC,
  MAX_HEADER_BYTES,
  newDataKey,
  openSegments,
  plaintextSize,
  readStart,
  sealSegments,
  SEGMENT_BYTES,
} from './envelope'
import type { KeyEncryptionKey } from './keys'

/**
 * The prefixes whose objects carry a state or what is derived from it (core's key layout): states,
 * versions and the state index's indexes (`units/`), staged `cloud` state versions and their
 * outputs (`tfe/`), S3 multipart parts (`s3/multipart-uploads/`), search changes (`search/`), and
 * runs' logs, variables and configurations (`runs/`).
 */
export const ENCRYPTED_PREFIXES = [
  'units/',
  'tfe/',
  's3/multipart-uploads/',
  'search/',
  'runs/',
] as const

/** What an object under the encrypted prefixes is now. */
export type ObjectState = { kind: 'plain' } | { kind: 'encrypted'; kek: string }

export interface EncryptingStoreOptions {
  /** Which keys are encrypted when written (default: those under `ENCRYPTED_PREFIXES`). */
  encrypts?: (key: string) => boolean
}

export interface EncryptionEvents {
  /** An object that claims to be encrypted failed to open (tampered, or under no listed KEK). */
  refused?(storageKey: string, reason: string): void
}

/**
 * An object store that encrypts what it writes under `ENCRYPTED_PREFIXES` (DESIGN section 15) and
 * opens what it reads: an envelope under any listed KEK, a plaintext object as it is, so a store
 * written before encryption was on stays readable. Keys, listings and conditional writes are the
 * store's own (an ETag is the stored object's); sizes from `get` and `head` are the plaintext's,
 * those of `list` the stored bytes'.
 */
export class EncryptingStore implements ObjectStore {
  readonly #store: ObjectStore
  readonly #keys: readonly KeyEncryptionKey[]
  readonly #events: EncryptionEvents
  readonly #encrypts: (key: string) => boolean

  constructor(
    store: ObjectStore,
    keys: readonly KeyEncryptionKey[],
    events: EncryptionEvents = {},
    options: EncryptingStoreOptions = {},
  ) {
    if (keys.length === 0) throw new Error('an encrypting store needs a key')
    this.#store = store
    this.#keys = keys
    this.#events = events
    this.#encrypts = options.encrypts ?? ((key) => EncryptingStore.encrypts(key))
  }

  get exclusive(): boolean {
    return this.#store.exclusive === true
  }

  /** The KEK that encrypts what is written now. */
  get currentKek(): string {
    return this.#keys[0]?.id ?? ''
  }

  /** Whether this store encrypts what it writes at `key`. */
  encryptsKey(key: string): boolean {
    return this.#encrypts(key)
  }

  /**
   * Whether the object at `key` is plain or under which KEK; undefined when there is none. With
   * the stored `size` a listing gave, its header is read without asking for the size again.
   */
  async stateOf(key: string, size?: number): Promise<ObjectState | undefined> {
    let stored = size
    if (stored === undefined) {
      stored = (await this.#store.head(key))?.size
      if (stored === undefined) return undefined
    }
    let start
    try {
      start = await this.#startOf(key, stored)
    } catch (error) {
      // Replaced by a shorter object since it was listed: read its size afresh.
      if (size !== undefined && error instanceof RangeNotSatisfiableError) return this.stateOf(key)
      throw error
    }
    return start === undefined ? { kind: 'plain' } : { kind: 'encrypted', kek: start.header.kek }
  }

  /** An envelope's start, read with one ranged read; undefined for a plain object. */
  async #startOf(key: string, size: number) {
    if (size < MAGIC.length + 4) return undefined
    const read = await this.#store.get(key, {
      range: { start: 0, end: Math.min(size, MAGIC.length + 4 + MAX_HEADER_BYTES) - 1 },
    })
    if (read === undefined) return undefined
    const iterator = read.body[Symbol.asyncIterator]()
    let first = Buffer.alloc(0)
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) {
      first = Buffer.concat([first, next.value])
    }
    return isEnvelope(first) ? readStart(iterator, first, key) : undefined
  }

  /** Whether objects at `key` are encrypted when written by default. */
  static encrypts(key: string): boolean {
    return ENCRYPTED_PREFIXES.some((prefix) => key.startsWith(prefix))
  }

  async put(
    key: string,
    body: Body,
    options?: PutOptions & { forceEncrypt?: boolean },
  ): Promise<ObjectInfo> {
    if (options?.forceEncrypt !== true && !this.#encrypts(key))
      return this.#store.put(key, body, options)
    const [kek] = this.#keys
    if (kek === undefined) throw new Error('no key-encryption key')
    const dataKey = newDataKey()
    const start = envelopeStart({
      v: 1,
      kek: kek.id,
      wrapped: await kek.wrap(dataKey, key),
      seg: SEGMENT_BYTES,
    })
    const plaintext = body instanceof Uint8Array ? bodyOf(body) : body
    async function* sealed(): AsyncGenerator<Uint8Array> {
      yield start
      yield* sealSegments(plaintext, dataKey, key, kek?.id ?? '')
    }
    const { forceEncrypt: _, ...rest } = options ?? {}
    const info = await this.#store.put(key, sealed(), rest)
    // The caller wrote the plaintext: the size it learns is the plaintext's.
    return { ...info, size: plaintextSize(info.size, start.length) }
  }

  async get(key: string, options?: GetOptions): Promise<StoredObject | undefined> {
    // Only the prefixes that carry state are ever encrypted: elsewhere (unit records, the audit
    // trail) a read goes straight to the store, ranges included.
    if (!this.#encrypts(key)) return this.#store.get(key, options)
    const stored = await this.#store.get(key)
    if (stored === undefined) return undefined
    const iterator = stored.body[Symbol.asyncIterator]()
    let first = Buffer.alloc(0)
    while (first.length < MAGIC.length) {
      const next = await iterator.next()
      if (next.done === true) break
      first = Buffer.concat([first, next.value])
    }
    if (!isEnvelope(first)) {
      const whole = { ...stored, body: prepend(first, iterator) }
      return options?.range === undefined ? whole : sliced(key, whole, options.range)
    }
    try {
      const { header, startBytes, rest } = await readStart(iterator, first, key)
      const kek = this.#keys.find((each) => each.id === header.kek)
      if (kek === undefined) {
        throw new EnvelopeError(
          key,
          `it is under key-encryption key ${header.kek}, which -encryption-keys does not list`,
        )
      }
      const dataKey = await kek.unwrap(header.wrapped, key).catch(() => {
        throw new EnvelopeError(
          key,
          `its data key does not open under key-encryption key ${kek.id}`,
        )
      })
      const size = plaintextSize(stored.size, startBytes, header.seg)
      const events = this.#events
      // The next chunk is read while this one is opened: the disk and the cipher work at once.
      const sealed = readingAhead(prepend(rest, iterator))
      const opened = openSegments(sealed, dataKey, key, kek.id, header.seg)
      // The first segment is opened before the object is handed on, so a small object that is not
      // genuine fails here, before any of it is served.
      const head = await opened.next()
      async function* body(): AsyncGenerator<Uint8Array> {
        try {
          if (head.done !== true) yield head.value
          // The next piece is opened while this one is written out: the cipher works while the
          // socket drains, not after.
          yield* readingAhead(opened)
        } catch (error) {
          if (error instanceof EnvelopeError) events.refused?.(key, error.message)
          throw error
        }
      }
      const plain: StoredObject = { key: stored.key, etag: stored.etag, size, body: body() }
      return options?.range === undefined ? plain : sliced(key, plain, options.range)
    } catch (error) {
      await iterator.return?.()
      if (error instanceof EnvelopeError) this.#events.refused?.(key, error.message)
      throw error
    }
  }

  async head(key: string): Promise<ObjectInfo | undefined> {
    const info = await this.#store.head(key)
    // Only the prefixes that carry state are ever encrypted: elsewhere the size is the stored one.
    if (info === undefined || !this.#encrypts(key)) return info
    const start = await this.#startOf(key, info.size)
    return start === undefined
      ? info
      : { ...info, size: plaintextSize(info.size, start.startBytes, start.header.seg) }
  }

  delete(key: string, options?: { ifMatch?: string }): Promise<void> {
    return this.#store.delete(key, options)
  }

  list(options: ListOptions): Promise<ListPage> {
    return this.#store.list(options)
  }

  ping(): Promise<void> {
    return this.#store.ping()
  }
}

async function* prepend(
  first: Uint8Array,
  rest: AsyncIterator<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  if (first.length > 0) yield first
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) yield next.value
}

/**
 * The chunks of `source`, each next one asked for as soon as the one before it is handed on, so
 * that the store reads it while the caller works on this one: one chunk ahead, no more.
 */
async function* readingAhead(source: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending = source.next()
  try {
    for (;;) {
      const next = await pending
      if (next.done === true) return
      pending = source.next()
      // A caller that stops early never awaits it: its failure is not theirs to hear.
      pending.catch(() => undefined)
      yield next.value
    }
  } finally {
    await source.return?.()
  }
}

/** A range of an object read whole: the bytes before it are read and dropped. */
function sliced(
  key: string,
  object: StoredObject,
  range: { start: number; end: number },
): StoredObject {
  checkRange(key, range, object.size)
  async function* body(): AsyncGenerator<Uint8Array> {
    let at = 0
    for await (const chunk of object.body) {
      const from = Math.max(0, range.start - at)
      const to = Math.min(chunk.length, range.end + 1 - at)
      if (from < to) yield chunk.subarray(from, to)
      at += chunk.length
      if (at > range.end) return
    }
  }
  return { ...object, body: body() }
}
