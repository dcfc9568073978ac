import { InvalidRequestError, type Core } from '@cairn/core'
import type { Unit } from '@cairn/contract'
import type { Identity } from '@cairn/auth'
import { S3Error } from './s3-errors'
import { keyOf, lockKeyOf, unitPrefixOf } from './s3-keys'
import { lockBytes, lockEtag, stateEtag } from './s3-objects'
import type { XmlContent } from './s3-xml'

/** An object as a listing shows it. */
interface Listed {
  key: string
  size: number
  etag: string
  modified: string
}

/** What a ListObjects (V1 or V2) request asks for. */
export interface ListRequest {
  bucket: string
  version: 1 | 2
  prefix: string
  delimiter: string | undefined
  maxKeys: number
  /** Only keys after this one: the continuation token's, `start-after`'s, or V1's `marker`. */
  after: string | undefined
  /** Set when the continuation token ended on a common prefix: skip every key under it. */
  afterPrefix: boolean
  urlEncoding: boolean
  /** As the client sent them, to echo back. */
  continuationToken: string | undefined
  startAfter: string | undefined
  marker: string | undefined
}

const MAX_KEYS = 1000

/**
 * Reads a ListObjects request's parameters: ListObjectsV2 with `list-type=2` (prefix,
 * delimiter, max-keys, continuation-token, start-after, encoding-type), ListObjects (V1, with
 * `marker`) otherwise.
 *
 * @throws S3Error `InvalidArgument`
 */
export function parseListRequest(bucket: string, query: URLSearchParams): ListRequest {
  const version = query.get('list-type') === '2' ? 2 : 1
  const rawMax = query.get('max-keys')
  const maxKeys = rawMax === null ? MAX_KEYS : Number(rawMax)
  if (!/^\d+$/.test(rawMax ?? '0')) {
    throw new S3Error('InvalidArgument', 'max-keys must be a whole number from 0')
  }
  const encoding = query.get('encoding-type')
  if (encoding !== null && encoding !== 'url') {
    throw new S3Error('InvalidArgument', 'encoding-type can only be url')
  }
  const token = version === 2 ? (query.get('continuation-token') ?? undefined) : undefined
  const startAfter = version === 2 ? (query.get('start-after') ?? undefined) : undefined
  const marker = version === 1 ? (query.get('marker') ?? undefined) : undefined
  const resumed = token === undefined ? undefined : readToken(token)
  const delimiter = query.get('delimiter')
  return {
    bucket,
    version,
    prefix: query.get('prefix') ?? '',
    delimiter: delimiter === null || delimiter === '' ? undefined : delimiter,
    maxKeys: Math.min(maxKeys, MAX_KEYS),
    after: resumed?.after ?? startAfter ?? marker,
    afterPrefix: resumed?.prefix ?? false,
    urlEncoding: encoding === 'url',
    continuationToken: token,
    startAfter,
    marker,
  }
}

/**
 * Answers a listing: every unit under the prefix that the caller may read appears under its key
 * (`keyOf`), once for its state (if it has one) and once more for its lock object while it is
 * locked, in key order, rolled into common prefixes by the delimiter. Keys do not sort as unit IDs
 * do (`a-b/…` sorts before `a/…`), so each page reads the units of the prefix's folder (the units
 * of `env:/` for Terraform's workspace list) and sorts their keys: a page costs what that folder
 * holds.
 */
export async function listObjects(
  core: Core,
  principal: Identity,
  request: ListRequest,
): Promise<XmlContent> {
  const objects = await objectsUnder(core, principal, request.prefix)
  const contents: Listed[] = []
  const prefixes: string[] = []
  let last: { entry: string; prefix: boolean } | undefined
  let truncated = false
  for (const object of objects) {
    const { key } = object
    if (request.after !== undefined) {
      if (key <= request.after) continue
      if (request.afterPrefix && key.startsWith(request.after)) continue
    }
    const common = commonPrefixOf(key, request.prefix, request.delimiter)
    if (common !== undefined && last?.prefix === true && last.entry === common) continue
    if (contents.length + prefixes.length >= request.maxKeys) {
      truncated = true
      break
    }
    if (common === undefined) {
      contents.push(object)
      last = { entry: key, prefix: false }
    } else {
      prefixes.push(common)
      last = { entry: common, prefix: true }
    }
  }
  return render(request, contents, prefixes, truncated, last)
}

async function objectsUnder(core: Core, principal: Identity, prefix: string): Promise<Listed[]> {
  const objects: Listed[] = []
  let cursor: string | undefined
  do {
    let page: { items: Unit[]; nextCursor: string | null }
    try {
      page = await core.units.list(principal, {
        prefix: unitPrefixOf(prefix),
        limit: MAX_KEYS,
        ...(cursor === undefined ? {} : { cursor }),
      })
    } catch (error) {
      // A prefix no unit ID can start with (a space, say) lists nothing, as S3 would.
      if (error instanceof InvalidRequestError && cursor === undefined) return []
      throw error
    }
    for (const unit of page.items) {
      if (unit.sha256 !== null) {
        objects.push({
          key: keyOf(unit.id),
          size: unit.size,
          etag: stateEtag(unit.sha256),
          modified: unit.updated,
        })
      }
      if (unit.lock !== null) {
        const bytes = lockBytes(unit.lock)
        objects.push({
          key: lockKeyOf(unit.id),
          size: bytes.byteLength,
          etag: lockEtag(bytes),
          modified: unit.lock.Created,
        })
      }
    }
    cursor = page.nextCursor ?? undefined
  } while (cursor !== undefined)
  // Unit IDs and keys are ASCII, so comparing strings is comparing bytes, as S3 orders keys.
  return objects
    .filter((object) => object.key.startsWith(prefix))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
}

function commonPrefixOf(
  key: string,
  prefix: string,
  delimiter: string | undefined,
): string | undefined {
  if (delimiter === undefined) return undefined
  const at = key.indexOf(delimiter, prefix.length)
  return at === -1 ? undefined : key.slice(0, at + delimiter.length)
}

function render(
  request: ListRequest,
  contents: readonly Listed[],
  prefixes: readonly string[],
  truncated: boolean,
  last: { entry: string; prefix: boolean } | undefined,
): XmlContent {
  const encode = (text: string) =>
    request.urlEncoding ? encodeURIComponent(text).replaceAll('%2F', '/') : text
  const next = truncated && last !== undefined ? last : undefined
  const shared: XmlContent = {
    Name: request.bucket,
    Prefix: encode(request.prefix),
    Delimiter: request.delimiter === undefined ? undefined : encode(request.delimiter),
    MaxKeys: request.maxKeys,
    IsTruncated: truncated,
    EncodingType: request.urlEncoding ? 'url' : undefined,
    Contents: contents.map((object) => ({
      Key: encode(object.key),
      LastModified: isoOf(object.modified),
      ETag: object.etag,
      Size: object.size,
      StorageClass: 'STANDARD',
    })),
    CommonPrefixes: prefixes.map((prefix) => ({ Prefix: encode(prefix) })),
  }
  if (request.version === 2) {
    return {
      ...shared,
      KeyCount: contents.length + prefixes.length,
      ContinuationToken: request.continuationToken,
      StartAfter: request.startAfter === undefined ? undefined : encode(request.startAfter),
      NextContinuationToken: next === undefined ? undefined : writeToken(next),
    }
  }
  return {
    ...shared,
    Marker: request.marker === undefined ? '' : encode(request.marker),
    // V1 names the next marker only with a delimiter; without one a client goes on from its last key.
    NextMarker:
      next !== undefined && request.delimiter !== undefined ? encode(next.entry) : undefined,
  }
}

function isoOf(rfc3339: string): string {
  const ms = Date.parse(rfc3339)
  return new Date(Number.isNaN(ms) ? 0 : ms).toISOString()
}

function writeToken(last: { entry: string; prefix: boolean }): string {
  return Buffer.from(JSON.stringify({ a: last.entry, p: last.prefix })).toString('base64url')
}

function readToken(token: string): { after: string; prefix: boolean } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown
    if (typeof parsed === 'object' && parsed !== null) {
      const { a, p } = parsed as { a?: unknown; p?: unknown }
      if (typeof a === 'string' && typeof p === 'boolean') return { after: a, prefix: p }
    }
  } catch {
    // Answered below.
  }
  throw new S3Error('InvalidArgument', 'the continuation token provided is incorrect')
}
