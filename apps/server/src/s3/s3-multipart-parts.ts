import { createHash } from 'node:crypto'
import {
  listAllKeys,
  PreconditionFailedError,
  STORE_KEYS,
  type Clock,
  type ObjectStore,
} from '@cairn/core'
import { S3Error } from './s3-errors'
import type { CompletedPart } from './s3-completed-parts'

/** A stored part as ListParts shows it. */
export interface ListedPart {
  partNumber: number
  size: number
  /** The hex MD5 of its bytes: its S3 ETag, unquoted. */
  md5: string
  /** When it was stored, RFC 3339; undefined when only its bytes say what it is. */
  stored: string | undefined
}

/** A part in the store: its size and the store's ETag of it. */
interface StoredPart {
  size: number
  etag: string
}

/** What a part's marker names: its MD5, when it was stored, and which stored bytes it is of. */
interface PartMarker {
  md5: string
  stored: string
  of: string
}

const DIGITS = 5
const TIME_DIGITS = 9

/**
 * The parts of S3 multipart uploads, under each upload's own folder of the staged uploads:
 *
 * | key                                          | what                                         |
 * | -------------------------------------------- | -------------------------------------------- |
 * | `<id>/parts/<part number, 5 digits>`         | the part's bytes                             |
 * | `<id>/etags/<n>.<md5>.<time>.<stored bytes>` | empty: the part's MD5 and when it was stored |
 *
 * A marker names the store's ETag of the bytes it describes (a hash of it), so ListParts trusts
 * it only for those very bytes: a part replaced by a retry, or whose marker a crash lost, has its
 * MD5 read from its bytes instead. Listing the parts and the markers reads no object.
 */
export class UploadParts {
  readonly #store: ObjectStore
  readonly #clock: Clock

  constructor(store: ObjectStore, clock: Clock) {
    this.#store = store
    this.#clock = clock
  }

  /** The size and store ETag of each part stored, by part number. */
  async stored(id: string): Promise<Map<number, StoredPart>> {
    const parts = new Map<number, StoredPart>()
    const folder = partsFolder(id)
    for await (const object of this.#list(folder)) {
      parts.set(Number(object.key.slice(folder.length)), { size: object.size, etag: object.etag })
    }
    return parts
  }

  /**
   * Stores a part's bytes (a retried part replaces the earlier one), refusing a body longer than
   * `room` with `EntityTooLarge` and storing nothing of it then. Answers the MD5 of the bytes and
   * the store's ETag of them.
   */
  async put(
    id: string,
    partNumber: number,
    body: AsyncIterable<Uint8Array>,
    room: number,
  ): Promise<{ md5: string; etag: string }> {
    const md5 = createHash('md5')
    const stored = await this.#store.put(partKey(id, partNumber), hashed(body, md5, room))
    return { md5: md5.digest('hex'), etag: stored.etag }
  }

  /** Records the MD5 of the bytes stored with `etag`, and drops the part's earlier markers. */
  async mark(id: string, partNumber: number, md5: string, etag: string): Promise<void> {
    const time = this.#clock.now().toString(36).padStart(TIME_DIGITS, '0')
    const marker = `${markerPrefix(id, partNumber)}${md5}.${time}.${etagHash(etag)}`
    await this.#store.put(marker, new Uint8Array(0))
    for await (const { key } of this.#list(markerPrefix(id, partNumber))) {
      if (key !== marker) await this.#store.delete(key)
    }
  }

  /** Takes a part back, unless a retry has replaced its bytes since (`etag`). */
  async remove(id: string, partNumber: number, etag: string): Promise<void> {
    await this.#store.delete(partKey(id, partNumber), { ifMatch: etag }).catch((error: unknown) => {
      if (!(error instanceof PreconditionFailedError)) throw error
    })
  }

  /** The parts stored, in part-number order, with their MD5s. */
  async list(id: string): Promise<ListedPart[]> {
    const markers = new Map<number, PartMarker[]>()
    const folder = markersFolder(id)
    for await (const { key } of this.#list(folder)) {
      const [number = '', md5 = '', time = '', of = ''] = key.slice(folder.length).split('.')
      const stored = new Date(Number.parseInt(time, 36)).toISOString()
      const found = markers.get(Number(number)) ?? []
      markers.set(Number(number), [...found, { md5, stored, of }])
    }
    const listed: ListedPart[] = []
    const parts = [...(await this.stored(id))].sort(([a], [b]) => a - b)
    for (const [partNumber, part] of parts) {
      const marker = markers.get(partNumber)?.find((one) => one.of === etagHash(part.etag))
      listed.push(
        marker === undefined
          ? {
              partNumber,
              size: part.size,
              md5: await this.#md5Of(id, partNumber),
              stored: undefined,
            }
          : { partNumber, size: part.size, md5: marker.md5, stored: marker.stored },
      )
    }
    return listed
  }

  /**
   * The named parts' bytes, in order, checking each part's MD5 against the ETag the client
   * names as it goes.
   */
  async *concatenate(id: string, parts: readonly CompletedPart[]): AsyncGenerator<Uint8Array> {
    for (const part of parts) {
      const object = await this.#store.get(partKey(id, part.partNumber))
      if (object === undefined) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} was not uploaded`)
      }
      const md5 = createHash('md5')
      for await (const chunk of object.body) {
        md5.update(chunk)
        yield chunk
      }
      if (md5.digest('hex') !== part.etag.toLowerCase()) {
        throw new S3Error('InvalidPart', `part ${part.partNumber} does not have the ETag named`)
      }
    }
  }

  /** Deletes every part and marker of an upload. */
  async deleteAll(id: string): Promise<void> {
    const keys: string[] = []
    for await (const key of listAllKeys(this.#store, uploadFolder(id))) keys.push(key)
    for (const key of keys) await this.#store.delete(key)
  }

  async #md5Of(id: string, partNumber: number): Promise<string> {
    const md5 = createHash('md5')
    const object = await this.#store.get(partKey(id, partNumber))
    for await (const chunk of object?.body ?? []) md5.update(chunk)
    return md5.digest('hex')
  }

  async *#list(prefix: string): AsyncGenerator<{ key: string; size: number; etag: string }> {
    let cursor: string | undefined
    do {
      const page = await this.#store.list({ prefix, ...(cursor === undefined ? {} : { cursor }) })
      yield* page.objects
      cursor = page.cursor
    } while (cursor !== undefined)
  }
}

function uploadFolder(id: string): string {
  return `${STORE_KEYS.s3MultipartUploads}${id}/`
}

function partsFolder(id: string): string {
  return `${uploadFolder(id)}parts/`
}

function partKey(id: string, partNumber: number): string {
  return `${partsFolder(id)}${String(partNumber).padStart(DIGITS, '0')}`
}

function markersFolder(id: string): string {
  return `${uploadFolder(id)}etags/`
}

function markerPrefix(id: string, partNumber: number): string {
  return `${markersFolder(id)}${String(partNumber).padStart(DIGITS, '0')}.`
}

/** A store ETag as a marker names it: short, and made only of characters keys may hold. */
function etagHash(etag: string): string {
  return createHash('sha256').update(etag).digest('hex').slice(0, 16)
}

/** Passes a body on while hashing it, refusing one longer than `room`. */
async function* hashed(
  body: AsyncIterable<Uint8Array>,
  hash: ReturnType<typeof createHash>,
  room: number,
): AsyncGenerator<Uint8Array> {
  let size = 0
  for await (const chunk of body) {
    size += chunk.byteLength
    if (size > room) throw tooLarge(room)
    hash.update(chunk)
    yield chunk
  }
}

/** `EntityTooLarge` for a part that would take an upload past the state limit. */
export function tooLarge(room: number): S3Error {
  return new S3Error(
    'EntityTooLarge',
    `the upload's parts would be larger than the largest state accepted (SVC_MAX_STATE_BYTES); ${Math.max(room, 0)} bytes are left for this part`,
  )
}
