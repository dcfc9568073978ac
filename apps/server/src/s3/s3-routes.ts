import type { AuthService } from '@cairn/auth'
import {
  StateTooLargeError,
  UnitNotFoundError,
  type Clock,
  type Core,
  type ObjectStore,
} from '@cairn/core'
import { Hono, type Context } from 'hono'
import { requestStream, stateStream } from '../http/body'
import { s3Authenticate } from './s3-auth'
import { serverSideEncryption, type AtRest } from './s3-encryption'
import { S3Error, onS3Error } from './s3-errors'
import { addressOf, queryOf, type S3Env } from './s3-env'
import { objectOfKey } from './s3-keys'
import { listObjects, parseListRequest } from './s3-listing'
import { DEFAULT_MAX_MULTIPART_UPLOADS, MultipartUploads } from './s3-multipart'
import {
  deleteLockObject,
  putLockObject,
  putStateObject,
  readLockObject,
  readSmallPayload,
  readStateObject,
  stateEtag,
} from './s3-objects'
import {
  listParts,
  listUploads,
  parsePartListRequest,
  parseUploadListRequest,
} from './s3-upload-listing'
import { xmlDocument, type XmlContent } from './s3-xml'

export interface S3RoutesDeps {
  core: Core
  store: ObjectStore
  /** Undefined when authentication is disabled. */
  auth: AuthService | undefined
  clock: Clock
  maxStateBytes: number
  /** `SVC_MAX_MULTIPART_UPLOADS`: multipart uploads in progress per principal. */
  maxMultipartUploads?: number
  /** Encryption at rest, when on: what server-side encryption headers are honoured against. */
  atRest?: AtRest | undefined
}

/** The largest CompleteMultipartUpload document: 10,000 parts of about 100 bytes each. */
const COMPLETE_BODY_BYTES = 2 * 1024 * 1024

/**
 * Query parameters that name a sub-resource this surface does not serve (ACLs, tagging, ...):
 * answered `NotImplemented` rather than taken for a plain object request.
 */
const SUBRESOURCES = [
  'acl',
  'tagging',
  'policy',
  'cors',
  'lifecycle',
  'website',
  'logging',
  'notification',
  'replication',
  'encryption',
  'object-lock',
  'retention',
  'legal-hold',
  'attributes',
  'torrent',
  'restore',
  'select',
  'uploads',
  'versions',
  'delete',
]

/**
 * The S3-compatible API at `/s3/{bucket}/{key}`, path style (DESIGN section 11): what Terraform's
 * `s3` backend with `use_lockfile = true`, the AWS SDKs and the AWS CLI need. A key names a unit's
 * state or its `.tflock` lock object (`s3-keys.ts`); the bucket is accepted whatever it is.
 * Every request is SigV4-signed with credentials from `POST /v1/auth/issue-s3-creds`; every
 * operation goes through core, so the lock, versions, status and RBAC are those of every other
 * surface.
 */
export function s3Routes(deps: S3RoutesDeps): Hono<S3Env> {
  const { core } = deps
  const multipart = new MultipartUploads(core, deps.store, deps.clock, {
    maxStateBytes: deps.maxStateBytes,
    maxOpenUploads: deps.maxMultipartUploads ?? DEFAULT_MAX_MULTIPART_UPLOADS,
  })
  const app = new Hono<S3Env>()
  app.onError(onS3Error)
  app.use('*', async (c, next) => {
    c.header('x-amz-request-id', c.var.requestId)
    await next()
  })
  app.use('*', s3Authenticate({ auth: deps.auth, clock: deps.clock }))

  // hono answers a HEAD with the GET route, so each GET route answers both.
  app.get('*', async (c) => {
    const { bucket, key } = addressOf(c)
    const query = queryOf(c)
    if (bucket === '') return listBuckets(c)
    if (key === '') {
      if (query.has('uploads')) return listMultipartUploads(c, multipart, bucket, query)
      return bucketGet(c, core, bucket, query)
    }
    refuseSubresources(query)
    // SSE-C on a read is refused where the refusal can say why: a HEAD's answer has no body.
    if (c.req.method !== 'HEAD') {
      serverSideEncryption((name) => c.req.header(name), deps.atRest, { reads: true })
    }
    const uploadId = query.get('uploadId')
    if (uploadId !== null) return listUploadParts(c, multipart, { bucket, key, uploadId }, query)
    const { unit, kind } = objectOfKey(key)
    return kind === 'lock' ? readLockObject(c, core, unit) : readStateObject(c, core, unit)
  })

  app.put('*', async (c) => {
    const { key } = addressOf(c)
    if (key === '') throw notImplemented('CreateBucket and the bucket settings')
    const query = queryOf(c)
    refuseSubresources(query)
    if (c.req.header('x-amz-copy-source') !== undefined) throw notImplemented('CopyObject')
    const { unit, kind } = objectOfKey(key)
    const uploadId = query.get('uploadId')
    const partNumber = query.get('partNumber')
    // A part is encrypted as its upload asked when it was created; SSE-C would be sent again here.
    const encrypted = serverSideEncryption((name) => c.req.header(name), deps.atRest, {
      reads: uploadId !== null,
    })
    if (uploadId !== null || partNumber !== null) {
      if (uploadId === null || partNumber === null || kind === 'lock') {
        throw new S3Error('InvalidRequest', 'a part upload names uploadId and partNumber')
      }
      const body = stateStream(c, c.var.payload.body(requestStream(c)))
      const { principal, payload } = c.var
      const part = await multipart.putPart(
        principal,
        key,
        uploadId,
        partNumber,
        body,
        payload.decodedLength,
      )
      return c.body(null, 200, { ETag: part.etag })
    }
    for (const [name, value] of Object.entries(encrypted)) c.header(name, value)
    if (kind === 'lock') return putLockObject(c, core, unit)
    const { decodedLength } = c.var.payload
    if (decodedLength !== undefined && decodedLength > deps.maxStateBytes) {
      throw new StateTooLargeError(deps.maxStateBytes)
    }
    const body = stateStream(c, c.var.payload.body(requestStream(c)))
    const version = await putStateObject(c, core, unit, body, decodedLength)
    return c.body(null, 200, { ETag: stateEtag(version.sha256) })
  })

  app.post('*', async (c) => {
    const { bucket, key } = addressOf(c)
    const query = queryOf(c)
    if (key === '') throw notImplemented(query.has('delete') ? 'DeleteObjects' : 'this request')
    const { unit, kind } = objectOfKey(key)
    if (kind === 'lock') throw new S3Error('InvalidRequest', 'a lock object is put whole')
    if (query.has('uploads')) {
      const encrypted = serverSideEncryption((name) => c.req.header(name), deps.atRest)
      const uploadId = await multipart.create(c.var.principal, key, unit)
      for (const [name, value] of Object.entries(encrypted)) c.header(name, value)
      return xml(c, 'InitiateMultipartUploadResult', {
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
      })
    }
    const uploadId = query.get('uploadId')
    if (uploadId === null) throw notImplemented('this POST')
    const document = await readSmallPayload(c, COMPLETE_BODY_BYTES)
    const etag = await multipart.complete(
      c.var.principal,
      key,
      uploadId,
      document,
      async (body, size) => stateEtag((await putStateObject(c, core, unit, body, size)).sha256),
    )
    return xml(c, 'CompleteMultipartUploadResult', {
      Location: new URL(c.req.url).origin + c.req.path,
      Bucket: bucket,
      Key: key,
      ETag: etag,
    })
  })

  app.delete('*', async (c) => {
    const { key } = addressOf(c)
    if (key === '') throw notImplemented('DeleteBucket')
    const query = queryOf(c)
    refuseSubresources(query)
    const { unit, kind } = objectOfKey(key)
    const uploadId = query.get('uploadId')
    if (uploadId !== null) {
      await multipart.abort(c.var.principal, key, uploadId)
      return c.body(null, 204)
    }
    if (kind === 'lock') return deleteLockObject(c, core, unit)
    await core.units.delete(c.var.principal, unit).catch((error: unknown) => {
      // Deleting what does not exist succeeds, as in S3.
      if (!(error instanceof UnitNotFoundError)) throw error
    })
    return c.body(null, 204)
  })

  app.all('*', () => {
    throw new S3Error('MethodNotAllowed', 'the method is not allowed against this resource')
  })
  return app
}

/** GET on a bucket: a listing, or the few bucket settings S3 clients read. */
async function bucketGet(c: Context<S3Env>, core: Core, bucket: string, query: URLSearchParams) {
  if (query.has('location')) return xml(c, 'LocationConstraint', {})
  // Every version is kept: what a client checking versioning should hear.
  if (query.has('versioning')) return xml(c, 'VersioningConfiguration', { Status: 'Enabled' })
  refuseSubresources(query)
  if (c.req.method === 'HEAD') return c.body(null, 200)
  const listing = await listObjects(core, c.var.principal, parseListRequest(bucket, query))
  return xml(c, 'ListBucketResult', listing)
}

/** ListMultipartUploads: every upload in progress for an administrator, one's own otherwise. */
async function listMultipartUploads(
  c: Context<S3Env>,
  multipart: MultipartUploads,
  bucket: string,
  query: URLSearchParams,
) {
  const request = parseUploadListRequest(bucket, query)
  const uploads = await multipart.inProgress(c.var.principal)
  return xml(c, 'ListMultipartUploadsResult', listUploads(request, uploads))
}

/** ListParts: an upload's parts, for its initiator or an administrator. */
async function listUploadParts(
  c: Context<S3Env>,
  multipart: MultipartUploads,
  target: { bucket: string; key: string; uploadId: string },
  query: URLSearchParams,
) {
  const request = parsePartListRequest(target.bucket, target.key, query)
  const { upload, parts } = await multipart.parts(c.var.principal, target.key, target.uploadId)
  return xml(c, 'ListPartsResult', listParts(request, upload, parts))
}

/** ListBuckets: Cairn has no buckets of its own (any name is accepted), so the list is empty. */
function listBuckets(c: Context<S3Env>) {
  if (c.req.method === 'HEAD') return c.body(null, 200)
  return xml(c, 'ListAllMyBucketsResult', {
    Owner: { ID: c.var.principal.subject, DisplayName: c.var.principal.subject },
    Buckets: '',
  })
}

function xml(c: Context<S3Env>, root: string, content: XmlContent) {
  return c.body(xmlDocument(root, content), 200, { 'Content-Type': 'application/xml' })
}

function refuseSubresources(query: URLSearchParams): void {
  const named = SUBRESOURCES.find((name) => query.has(name))
  if (named !== undefined) throw notImplemented(`the ${named} sub-resource`)
}

function notImplemented(what: string): S3Error {
  return new S3Error('NotImplemented', `${what} is not implemented by Cairn's S3 API`)
}
