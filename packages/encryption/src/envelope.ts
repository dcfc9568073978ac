import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

/**
 * The envelope of an encrypted object (docs/encryption.md):
 *
 *     "\0CAIRNE1" | header length (uint32 BE) | header (JSON) | segment 0 | segment 1 | ...
 *
 * The header names the key-encryption key (`kek`) and holds the object's data key wrapped by it
 * (`wrapped`, base64) and the segment size (`seg`). The body is the plaintext in segments of `seg`
 * bytes, the last one shorter (empty when the plaintext fills the others exactly), each sealed by
 * AES-256-GCM under the data key with its index as the nonce and, as associated data, the
 * object's storage key, the KEK's ID, the index and whether it is the last: a segment moved,
 * dropped, swapped between objects or cut off fails to open. The magic starts with a NUL byte,
 * which no JSON document does, so a plaintext object is told apart by its first bytes.
 */
export const MAGIC = Buffer.from('\0CAIRNE1', 'latin1')
/**
 * The plaintext bytes of a segment an object is written with now (a reader takes the size its
 * header names). Opening costs a cipher setup per segment: 256 KiB opens 100 MiB a quarter
 * faster than 64 KiB, and memory still holds one segment.
 */
export const SEGMENT_BYTES = 256 * 1024
const TAG_BYTES = 16
/** The most header bytes a reader accepts (a wrapped key from a KMS is a few hundred bytes). */
export const MAX_HEADER_BYTES = 16 * 1024

export interface EnvelopeHeader {
  v: 1
  kek: string
  wrapped: string
  seg: number
}

/** An object that claims to be encrypted and is not whole or not genuine. */
export class EnvelopeError extends Error {
  readonly storageKey: string

  constructor(storageKey: string, message: string) {
    super(`the encrypted object ${storageKey} cannot be read: ${message}`)
    this.name = 'EnvelopeError'
    this.storageKey = storageKey
  }
}

export function isEnvelope(head: Uint8Array): boolean {
  return head.length >= MAGIC.length && Buffer.from(head.subarray(0, MAGIC.length)).equals(MAGIC)
}

/** The bytes that start an envelope: magic, header length, header. */
export function envelopeStart(header: EnvelopeHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header))
  const length = Buffer.alloc(4)
  length.writeUInt32BE(json.length)
  return Buffer.concat([MAGIC, length, json])
}

/** The plaintext size of an envelope of `stored` bytes whose start is `startBytes` long. */
export function plaintextSize(stored: number, startBytes: number, seg = SEGMENT_BYTES): number {
  const sealed = stored - startBytes
  const segments = Math.max(1, Math.ceil(sealed / (seg + TAG_BYTES)))
  return sealed - segments * TAG_BYTES
}

/**
 * Bytes queued as they came, taken from the front in pieces: a piece that lies within one chunk is
 * a view of it, and only one that spans chunks is copied.
 */
class ByteQueue {
  #parts: Buffer[] = []
  length = 0

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return
    this.#parts.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))
    this.length += chunk.length
  }

  /** The next `bytes` bytes as views of the chunks they lie in: nothing is copied. */
  takeViews(bytes: number): Buffer[] {
    const views: Buffer[] = []
    let wanted = bytes
    while (wanted > 0) {
      const part = this.#parts[0]
      if (part === undefined) throw new RangeError('taking more bytes than are queued')
      if (part.length <= wanted) {
        views.push(part)
        this.#parts.shift()
        wanted -= part.length
      } else {
        views.push(part.subarray(0, wanted))
        this.#parts[0] = part.subarray(wanted)
        wanted = 0
      }
    }
    this.length -= bytes
    return views
  }

  take(bytes: number): Buffer {
    const first = this.#parts[0]
    if (first !== undefined && first.length >= bytes) {
      const piece = first.subarray(0, bytes)
      if (first.length === bytes) this.#parts.shift()
      else this.#parts[0] = first.subarray(bytes)
      this.length -= bytes
      return piece
    }
    const piece = Buffer.allocUnsafe(bytes)
    let at = 0
    while (at < bytes) {
      const part = this.#parts[0]
      if (part === undefined) throw new RangeError('taking more bytes than are queued')
      const used = Math.min(part.length, bytes - at)
      part.copy(piece, at, 0, used)
      at += used
      if (used === part.length) this.#parts.shift()
      else this.#parts[0] = part.subarray(used)
    }
    this.length -= bytes
    return piece
  }
}

function nonceOf(index: number): Buffer {
  const nonce = Buffer.alloc(12)
  nonce.writeUIntBE(index, 6, 6)
  return nonce
}

function aadOf(storageKey: string, kek: string, index: number, last: boolean): Buffer {
  return Buffer.from(JSON.stringify(['cairn-segment', storageKey, kek, index, last]))
}

/** A fresh data key. */
export function newDataKey(): Buffer {
  return randomBytes(32)
}

/**
 * Seals `plaintext` as segments under `dataKey`, streaming: memory holds one segment.
 */
export async function* sealSegments(
  plaintext: AsyncIterable<Uint8Array>,
  dataKey: Buffer,
  storageKey: string,
  kek: string,
  seg = SEGMENT_BYTES,
): AsyncGenerator<Uint8Array> {
  const pending = new ByteQueue()
  let index = 0
  /** A segment sealed: its ciphertext, then its tag (GCM's final adds no bytes). */
  const seal = (bytes: Buffer, last: boolean): Buffer[] => {
    const cipher = createCipheriv('aes-256-gcm', dataKey, nonceOf(index))
    cipher.setAAD(aadOf(storageKey, kek, index, last))
    const sealed = cipher.update(bytes)
    cipher.final()
    index += 1
    return [sealed, cipher.getAuthTag()]
  }
  for await (const chunk of plaintext) {
    pending.push(chunk)
    // A full segment is sealed only once a byte after it is known: the last one is marked so.
    // What one chunk seals goes on as one buffer: fewer, larger writes downstream.
    const out: Buffer[] = []
    while (pending.length > seg) out.push(...seal(pending.take(seg), false))
    if (out.length > 0) yield Buffer.concat(out)
  }
  if (pending.length === seg) yield Buffer.concat(seal(pending.take(seg), false))
  yield Buffer.concat(seal(pending.take(pending.length), true))
}

/**
 * Opens the segments that follow an envelope's start, streaming; fails with `EnvelopeError` at
 * the first segment that is not genuine, or when the last one is missing.
 */
export async function* openSegments(
  sealed: AsyncIterable<Uint8Array>,
  dataKey: Buffer,
  storageKey: string,
  kek: string,
  seg: number,
): AsyncGenerator<Uint8Array> {
  const whole = seg + TAG_BYTES
  const pending = new ByteQueue()
  let index = 0
  /**
   * Opens the next segment of `bytes` bytes where it lies, in the chunks it spans (only its tag
   * is copied when it spans two): the plaintext comes out in as many pieces.
   */
  const open = (bytes: number, last: boolean): Buffer[] => {
    if (bytes < TAG_BYTES) throw new EnvelopeError(storageKey, 'a segment is cut short')
    const ciphertext = pending.takeViews(bytes - TAG_BYTES)
    const decipher = createDecipheriv('aes-256-gcm', dataKey, nonceOf(index))
    decipher.setAAD(aadOf(storageKey, kek, index, last))
    decipher.setAuthTag(pending.take(TAG_BYTES))
    try {
      const plain = ciphertext.map((piece) => decipher.update(piece))
      // GCM's final adds no bytes: it checks the tag, and throws when it does not hold.
      decipher.final()
      index += 1
      return plain
    } catch {
      throw new EnvelopeError(storageKey, `segment ${index} is not genuine (changed, moved or cut)`)
    }
  }
  for await (const chunk of sealed) {
    pending.push(chunk)
    while (pending.length > whole) yield* open(whole, false)
  }
  // The last segment is shorter than a whole one (empty when the plaintext fills the others):
  // a whole one at the very end means the last was cut off.
  if (pending.length === whole) throw new EnvelopeError(storageKey, 'its last segment is missing')
  yield* open(pending.length, true)
}

/** Reads an envelope's start from the first bytes of a stream: the header and what follows it. */
export async function readStart(
  iterator: AsyncIterator<Uint8Array>,
  first: Buffer,
  storageKey: string,
): Promise<{ header: EnvelopeHeader; startBytes: number; rest: Buffer }> {
  let buffered = first
  const need = async (bytes: number) => {
    while (buffered.length < bytes) {
      const next = await iterator.next()
      if (next.done === true) throw new EnvelopeError(storageKey, 'it ends inside its header')
      buffered = Buffer.concat([buffered, next.value])
    }
  }
  await need(MAGIC.length + 4)
  const length = buffered.readUInt32BE(MAGIC.length)
  if (length > MAX_HEADER_BYTES) throw new EnvelopeError(storageKey, 'its header is too large')
  const startBytes = MAGIC.length + 4 + length
  await need(startBytes)
  let parsed: unknown
  try {
    parsed = JSON.parse(buffered.subarray(MAGIC.length + 4, startBytes).toString('utf8'))
  } catch {
    throw new EnvelopeError(storageKey, 'its header is not JSON')
  }
  const header = parsed as Partial<EnvelopeHeader>
  if (
    header.v !== 1 ||
    typeof header.kek !== 'string' ||
    typeof header.wrapped !== 'string' ||
    typeof header.seg !== 'number' ||
    !Number.isInteger(header.seg) ||
    header.seg < 1024 ||
    header.seg > 16 * 1024 * 1024
  ) {
    throw new EnvelopeError(storageKey, 'its header is not one this server writes')
  }
  return { header: header as EnvelopeHeader, startBytes, rest: buffered.subarray(startBytes) }
}
