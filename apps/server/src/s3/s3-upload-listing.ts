import type { Multipart } from './s3-multipart'
import type { ListedPart } from './s3-multipart-parts'
import { S3Error } from './s3-errors'
import type { XmlContent } from './s3-xml'

/** The most uploads or parts in one answer, and the default (S3's). */
const MAX_ENTRIES = 1000

/** What a ListMultipartUploads request asks for (`GET /{bucket}?uploads`). */
export interface UploadListRequest {
  bucket: string
  prefix: string
  delimiter: string | undefined
  keyMarker: string | undefined
  uploadIdMarker: string | undefined
  maxUploads: number
  urlEncoding: boolean
}

/**
 * Reads ListMultipartUploads' parameters: `prefix`, `delimiter`, `key-marker`,
 * `upload-id-marker` (read only with a key marker, as S3 does), `max-uploads`, `encoding-type`.
 *
 * @throws S3Error `InvalidArgument`
 */
export function parseUploadListRequest(bucket: string, query: URLSearchParams): UploadListRequest {
  const keyMarker = nonEmpty(query.get('key-marker'))
  const delimiter = nonEmpty(query.get('delimiter'))
  return {
    bucket,
    prefix: query.get('prefix') ?? '',
    delimiter,
    keyMarker,
    uploadIdMarker: keyMarker === undefined ? undefined : nonEmpty(query.get('upload-id-marker')),
    maxUploads: countParameter(query, 'max-uploads'),
    urlEncoding: encodingOf(query),
  }
}

/**
 * Answers ListMultipartUploads over the uploads the caller may see: those whose key starts with
 * the prefix, in key order and, for one key, in the order they began (S3's order), after the
 * markers, rolled into common prefixes by the delimiter, at most `max-uploads` entries.
 */
export function listUploads(request: UploadListRequest, uploads: readonly Multipart[]): XmlContent {
  const sorted = uploads
    .filter((upload) => upload.key.startsWith(request.prefix) && isAfterMarkers(upload, request))
    .sort((a, b) => compare(a.key, b.key) || compare(a.id, b.id))
  const listed: Multipart[] = []
  const prefixes: string[] = []
  let next: { key: string; uploadId: string | undefined } | undefined
  let truncated = false
  for (const upload of sorted) {
    const common = commonPrefixOf(upload.key, request)
    if (common !== undefined && prefixes.at(-1) === common) {
      // Rolled into the prefix just listed: the next page starts after its last key.
      if (next !== undefined) next = { key: upload.key, uploadId: undefined }
      continue
    }
    if (listed.length + prefixes.length >= request.maxUploads) {
      truncated = true
      break
    }
    if (common === undefined) listed.push(upload)
    else prefixes.push(common)
    next = { key: upload.key, uploadId: common === undefined ? upload.id : undefined }
  }
  const encode = encoder(request.urlEncoding)
  return {
    Bucket: request.bucket,
    KeyMarker: encode(request.keyMarker ?? ''),
    UploadIdMarker: request.uploadIdMarker ?? '',
    NextKeyMarker: truncated && next !== undefined ? encode(next.key) : undefined,
    NextUploadIdMarker: truncated && next !== undefined ? (next.uploadId ?? '') : undefined,
    Prefix: encode(request.prefix),
    Delimiter: request.delimiter === undefined ? undefined : encode(request.delimiter),
    MaxUploads: request.maxUploads,
    IsTruncated: truncated,
    EncodingType: request.urlEncoding ? 'url' : undefined,
    Upload: listed.map((upload) => ({
      Key: encode(upload.key),
      UploadId: upload.id,
      Initiator: person(upload),
      Owner: person(upload),
      StorageClass: 'STANDARD',
      Initiated: upload.created,
    })),
    CommonPrefixes: prefixes.map((prefix) => ({ Prefix: encode(prefix) })),
  }
}

/** What a ListParts request asks for (`GET /{bucket}/{key}?uploadId=`). */
export interface PartListRequest {
  bucket: string
  key: string
  partNumberMarker: number
  maxParts: number
  urlEncoding: boolean
}

/** @throws S3Error `InvalidArgument` */
export function parsePartListRequest(
  bucket: string,
  key: string,
  query: URLSearchParams,
): PartListRequest {
  const marker = query.get('part-number-marker') ?? '0'
  if (!/^\d{1,5}$/.test(marker)) {
    throw new S3Error('InvalidArgument', 'part-number-marker must be a whole number')
  }
  return {
    bucket,
    key,
    partNumberMarker: Number(marker),
    maxParts: countParameter(query, 'max-parts'),
    urlEncoding: encodingOf(query),
  }
}

/** Answers ListParts: the parts after the marker, in part-number order, at most `max-parts`. */
export function listParts(
  request: PartListRequest,
  upload: Multipart,
  parts: readonly ListedPart[],
): XmlContent {
  const after = parts.filter((part) => part.partNumber > request.partNumberMarker)
  const page = after.slice(0, request.maxParts)
  const truncated = after.length > page.length
  const encode = encoder(request.urlEncoding)
  return {
    Bucket: request.bucket,
    Key: encode(request.key),
    UploadId: upload.id,
    Initiator: person(upload),
    Owner: person(upload),
    StorageClass: 'STANDARD',
    PartNumberMarker: request.partNumberMarker,
    NextPartNumberMarker: page.at(-1)?.partNumber ?? request.partNumberMarker,
    MaxParts: request.maxParts,
    IsTruncated: truncated,
    EncodingType: request.urlEncoding ? 'url' : undefined,
    Part: page.map((part) => ({
      PartNumber: part.partNumber,
      LastModified: part.stored ?? upload.created,
      ETag: `"${part.md5}"`,
      Size: part.size,
    })),
  }
}

function isAfterMarkers(upload: Multipart, request: UploadListRequest): boolean {
  const { keyMarker, uploadIdMarker } = request
  if (keyMarker === undefined || upload.key > keyMarker) return true
  return upload.key === keyMarker && uploadIdMarker !== undefined && upload.id > uploadIdMarker
}

function commonPrefixOf(key: string, request: UploadListRequest): string | undefined {
  if (request.delimiter === undefined) return undefined
  const at = key.indexOf(request.delimiter, request.prefix.length)
  return at === -1 ? undefined : key.slice(0, at + request.delimiter.length)
}

function person(upload: Multipart): XmlContent {
  return { ID: upload.owner.subject, DisplayName: upload.owner.subject }
}

function countParameter(query: URLSearchParams, name: string): number {
  const raw = query.get(name)
  if (raw === null) return MAX_ENTRIES
  if (!/^\d{1,9}$/.test(raw)) {
    throw new S3Error('InvalidArgument', `${name} must be a whole number from 0`)
  }
  return Math.min(Number(raw), MAX_ENTRIES)
}

function encodingOf(query: URLSearchParams): boolean {
  const encoding = query.get('encoding-type')
  if (encoding !== null && encoding !== 'url') {
    throw new S3Error('InvalidArgument', 'encoding-type can only be url')
  }
  return encoding === 'url'
}

function encoder(urlEncoding: boolean): (text: string) => string {
  return (text) => (urlEncoding ? encodeURIComponent(text).replaceAll('%2F', '/') : text)
}

function nonEmpty(value: string | null): string | undefined {
  return value === null || value === '' ? undefined : value
}

/** Byte order of ASCII keys and IDs, as S3 sorts them. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
