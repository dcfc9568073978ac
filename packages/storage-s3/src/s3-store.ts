import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3'
import {
  assertByteRange,
  checkRange,
  PreconditionFailedError,
  RangeNotSatisfiableError,
  type Body,
  type ByteRange,
  type GetOptions,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutCondition,
  type PutOptions,
  type StoredObject,
} from '@cairn/core'
import { BodyReadError, partsOf } from './body-parts'
import { IfMatchForm, normalizeEtag } from './etag'
import { checkBucket } from './open-check'
import { createS3Client } from './s3-client'
import { parseContentRange } from './content-range'
import { asStoreFault, isInvalidRange, isNotFound, isPreconditionFailure } from './s3-errors'
import type { S3StoreOptions } from './s3-store-options'

const MIB = 1024 * 1024
/** S3's smallest part, the last excepted. */
const MIN_PART_SIZE = 5 * MIB
const DEFAULT_PART_SIZE = 8 * MIB

export interface S3Store extends ObjectStore {
  /** Closes the client's sockets. */
  close(): Promise<void>
}

/**
 * Opens core's object store over an S3 bucket, after checking that the bucket answers to these
 * credentials (`S3StoreError` with `bucket_not_found`, `access_denied`, `endpoint_unreachable`,
 * `credentials_missing` or `check_failed` otherwise). Keys are those of the fs store, under
 * `prefix`.
 */
export async function openS3Store(options: S3StoreOptions): Promise<S3Store> {
  const partSize = options.partSize ?? DEFAULT_PART_SIZE
  if (!Number.isInteger(partSize) || partSize < MIN_PART_SIZE) {
    throw new RangeError(`partSize must be an integer of at least ${MIN_PART_SIZE} bytes`)
  }
  const client = createS3Client(options)
  try {
    await checkBucket(client, options)
  } catch (error) {
    client.destroy()
    throw error
  }
  return guard(createStore(client, options, partSize))
}

function createStore(client: S3Client, options: S3StoreOptions, partSize: number): S3Store {
  const Bucket = options.bucket
  const base = options.prefix ?? ''
  const ifMatchForm = new IfMatchForm()
  const objectKey = (key: string) => base + key

  /** One PUT of bytes in hand, with its condition. */
  const putOnce = async (
    key: string,
    bytes: Uint8Array,
    condition: PutCondition | undefined,
    contentType: string | undefined,
  ): Promise<ObjectInfo> => {
    const send = (extra: { IfNoneMatch?: string; IfMatch?: string }) =>
      client.send(
        new PutObjectCommand({
          Bucket,
          Key: objectKey(key),
          Body: bytes,
          ContentLength: bytes.byteLength,
          ...(contentType === undefined ? {} : { ContentType: contentType }),
          ...extra,
        }),
      )
    try {
      const result =
        condition === undefined
          ? await send({})
          : 'ifNoneMatch' in condition
            ? await send({ IfNoneMatch: '*' })
            : await ifMatchForm.send(condition.ifMatch, (IfMatch) => send({ IfMatch }))
      return { key, etag: normalizeEtag(result.ETag), size: bytes.byteLength }
    } catch (error) {
      if (isPreconditionFailure(error)) throw new PreconditionFailedError(key)
      throw error
    }
  }

  /** A multipart upload, one part in flight while the next is read; aborted on any failure. */
  const putParts = async (
    key: string,
    parts: AsyncGenerator<Uint8Array>,
    first: Uint8Array,
    condition: PutCondition | undefined,
    contentType: string | undefined,
  ): Promise<ObjectInfo> => {
    const Key = objectKey(key)
    const created = await client.send(
      new CreateMultipartUploadCommand({
        Bucket,
        Key,
        ...(contentType === undefined ? {} : { ContentType: contentType }),
      }),
    )
    const UploadId = created.UploadId
    if (UploadId === undefined) throw new Error('the object store returned no upload id')
    const completed: CompletedPart[] = []
    let inFlight: Promise<void> = Promise.resolve()
    let size = 0
    try {
      let part: Uint8Array | undefined = first
      for (let PartNumber = 1; part !== undefined; PartNumber += 1) {
        await inFlight
        const Body: Uint8Array = part
        size += Body.byteLength
        inFlight = client
          .send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body }))
          .then((result) => {
            completed.push({ PartNumber, ETag: result.ETag })
          })
        // Observed here so a failure while the next part is read is no unhandled rejection;
        // the loop's next await reports it.
        inFlight.catch(() => undefined)
        const next = await parts.next()
        part = next.done === true ? undefined : next.value
      }
      await inFlight
      const complete = (extra: { IfNoneMatch?: string; IfMatch?: string }) =>
        client.send(
          new CompleteMultipartUploadCommand({
            Bucket,
            Key,
            UploadId,
            MultipartUpload: { Parts: completed },
            ...extra,
          }),
        )
      const result =
        condition === undefined
          ? await complete({})
          : 'ifNoneMatch' in condition
            ? await complete({ IfNoneMatch: '*' })
            : await ifMatchForm.send(condition.ifMatch, (IfMatch) => complete({ IfMatch }))
      // Some servers (Ceph RGW 16) answer the completion with an empty ETag: read it back then.
      const etag =
        result.ETag !== undefined && result.ETag !== '' ? result.ETag : (await headOf(key))?.etag
      return { key, etag: normalizeEtag(etag), size }
    } catch (error) {
      await inFlight.catch(() => undefined)
      await client
        .send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }))
        .catch(() => undefined)
      if (isPreconditionFailure(error)) throw new PreconditionFailedError(key)
      throw error
    }
  }

  const headOf = async (key: string): Promise<ObjectInfo | undefined> => {
    try {
      const result = await client.send(new HeadObjectCommand({ Bucket, Key: objectKey(key) }))
      return { key, etag: normalizeEtag(result.ETag), size: result.ContentLength ?? 0 }
    } catch (error) {
      if (isNotFound(error)) return undefined
      throw error
    }
  }

  /**
   * A ranged GET. S3 answers 416 only for a range that starts at or past the end, and cuts one that
   * ends past it short (RFC 9110 section 14.1.2): the 206's `Content-Range` says what was sent
   * and the whole size, so a short range is refused here.
   */
  const getRange = async (key: string, range: ByteRange): Promise<StoredObject | undefined> => {
    // A malformed Range header is ignored by S3, which would then send the whole object.
    assertByteRange(range)
    let result
    try {
      result = await client.send(
        new GetObjectCommand({
          Bucket,
          Key: objectKey(key),
          Range: `bytes=${range.start}-${range.end}`,
        }),
      )
    } catch (error) {
      if (isNotFound(error)) return undefined
      if (!isInvalidRange(error)) throw error
      // A 416 names the size in XML only some servers send: ask for it.
      const info = await headOf(key)
      if (info === undefined) return undefined
      throw new RangeNotSatisfiableError(key, range, info.size)
    }
    const body = result.Body as (AsyncIterable<Uint8Array> & { destroy?: () => void }) | undefined
    if (body === undefined) throw new Error(`the object store returned no body for ${key}`)
    const sent = parseContentRange(result.ContentRange)
    try {
      // A 200 without Content-Range sent the whole object; some servers answer so for an empty one.
      checkRange(key, range, sent?.size ?? result.ContentLength ?? 0)
      if (sent?.start !== range.start || sent.end !== range.end) {
        const what = sent === undefined ? 'the whole object' : `bytes ${sent.start}-${sent.end}`
        throw new Error(
          `the object store sent ${what} of ${key} for bytes ${range.start}-${range.end}`,
        )
      }
    } catch (error) {
      // The body is not handed on: release its socket.
      body.destroy?.()
      throw error
    }
    return { key, etag: normalizeEtag(result.ETag), size: sent.size, body }
  }

  return {
    async get(key, getOptions?: GetOptions): Promise<StoredObject | undefined> {
      const range = getOptions?.range
      if (range !== undefined) return getRange(key, range)
      try {
        const result = await client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }))
        const body = result.Body as AsyncIterable<Uint8Array> | undefined
        if (body === undefined) throw new Error(`the object store returned no body for ${key}`)
        return { key, etag: normalizeEtag(result.ETag), size: result.ContentLength ?? 0, body }
      } catch (error) {
        if (isNotFound(error)) return undefined
        throw error
      }
    },

    head: headOf,

    async put(key: string, body: Body, putOptions?: PutOptions): Promise<ObjectInfo> {
      const condition = putOptions?.condition
      const contentType = putOptions?.contentType
      const parts = partsOf(body, partSize)
      try {
        const first = await parts.next()
        const second = await parts.next()
        const head = first.done === true ? new Uint8Array(0) : first.value
        if (second.done === true) return await putOnce(key, head, condition, contentType)
        if (condition !== undefined && options.conditionalMultipart !== true) {
          // The server may ignore conditions on CompleteMultipartUpload (Ceph RGW 16 does): a
          // conditional body is then sent whole in one conditional PUT, held in memory.
          const chunks = [head, second.value]
          for await (const part of parts) chunks.push(part)
          return await putOnce(key, Buffer.concat(chunks), condition, contentType)
        }
        return await putParts(key, prepend(second.value, parts), head, condition, contentType)
      } finally {
        await parts.return(undefined)
      }
    },

    async delete(key, deleteOptions) {
      const ifMatch = deleteOptions?.ifMatch
      const send = (extra: { IfMatch?: string }) =>
        client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key), ...extra }))
      if (ifMatch === undefined) {
        await send({})
        return
      }
      if (options.conditionalDelete === true) {
        try {
          await ifMatchForm.send(ifMatch, (IfMatch) => send({ IfMatch }))
          return
        } catch (error) {
          if (isPreconditionFailure(error) || isNotFound(error)) {
            throw new PreconditionFailedError(key)
          }
          throw error
        }
      }
      // Not atomic: a write between the HEAD and the DELETE is lost. See the README.
      const current = await headOf(key)
      if (current?.etag !== normalizeEtag(ifMatch)) {
        throw new PreconditionFailedError(key)
      }
      await send({})
    },

    async list(listOptions: ListOptions): Promise<ListPage> {
      const { prefix, delimiter, startAfter, cursor, limit } = listOptions
      const result = await client.send(
        new ListObjectsV2Command({
          Bucket,
          Prefix: objectKey(prefix),
          ...((delimiter ?? '') === '' ? {} : { Delimiter: delimiter }),
          ...(startAfter === undefined ? {} : { StartAfter: objectKey(startAfter) }),
          ...(cursor === undefined ? {} : { ContinuationToken: cursor }),
          ...(limit === undefined ? {} : { MaxKeys: limit }),
        }),
      )
      const relative = (key: string) => key.slice(base.length)
      const page: ListPage = {
        objects: (result.Contents ?? []).map((object) => ({
          key: relative(object.Key ?? ''),
          etag: normalizeEtag(object.ETag),
          size: object.Size ?? 0,
        })),
        prefixes: (result.CommonPrefixes ?? []).map((common) => relative(common.Prefix ?? '')),
      }
      if (result.IsTruncated === true && result.NextContinuationToken !== undefined) {
        page.cursor = result.NextContinuationToken
      }
      return page
    },

    async ping() {
      await client.send(new HeadBucketCommand({ Bucket }))
    },

    close() {
      client.destroy()
      return Promise.resolve()
    },
  }
}

async function* prepend(
  first: Uint8Array,
  rest: AsyncGenerator<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  yield first
  yield* rest
}

/**
 * Reports S3's failures as core's: whatever means the store cannot serve now becomes
 * `StorageUnavailableError`; an error of the caller's body comes out as it was thrown.
 */
function guard(store: S3Store): S3Store {
  const wrap =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await call(...args)
      } catch (error) {
        if (error instanceof BodyReadError) throw error.cause
        throw asStoreFault(error)
      }
    }
  return {
    get: wrap(store.get.bind(store)),
    head: wrap(store.head.bind(store)),
    put: wrap(store.put.bind(store)),
    delete: wrap(store.delete.bind(store)),
    list: wrap(store.list.bind(store)),
    ping: wrap(store.ping.bind(store)),
    close: store.close.bind(store),
  }
}
