import { createHash } from 'node:crypto'
import {
  LockConflictError,
  parseLockRequest,
  parseRangeHeader,
  RangeNotSatisfiableError,
  readBounded,
  toWebStream,
  type Core,
  type UnitId,
} from '@cairn/core'
import type { LockInfo } from '@cairn/contract'
import type { Context } from 'hono'
import type { Identity } from '@cairn/auth'
import { noteAudit, noteUnlock } from '../audit/audit-trail'
import { SMALL_BODY_BYTES, requestStream } from '../http/body'
import { S3Error } from './s3-errors'
import type { S3Env } from './s3-env'
import { unquote } from './s3-completed-parts'

/** The ETag of a state: its sha256, as `/v1` gives it, so a condition means the same on both. */
export function stateEtag(sha256: string): string {
  return `"${sha256}"`
}

/** The bytes a unit's `.tflock` object reads as: its LockInfo, as Terraform wrote it. */
export function lockBytes(lock: LockInfo): Buffer {
  return Buffer.from(JSON.stringify(lock))
}

/** A lock object's ETag: the sha256 of its bytes. */
export function lockEtag(bytes: Uint8Array): string {
  return `"${createHash('sha256').update(bytes).digest('hex')}"`
}

/**
 * GET or HEAD of a unit's `.tflock`: the held lock's LockInfo, or `NoSuchKey` when the unit is not
 * locked. Terraform reads it to name the holder of a lock it could not take, and to compare IDs
 * before it deletes its own.
 */
export async function readLockObject(c: Context<S3Env>, core: Core, unit: UnitId) {
  const details = await core.units.get(c.var.principal, unit)
  if (details.lock === null) throw new S3Error('NoSuchKey', `${unit} is not locked`)
  const bytes = lockBytes(details.lock)
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'Content-Length': String(bytes.byteLength),
    ETag: lockEtag(bytes),
    'Last-Modified': httpDate(details.lock.Created),
    'Accept-Ranges': 'bytes',
  }
  if (checksumWanted(c)) {
    headers['x-amz-checksum-sha256'] = createHash('sha256').update(bytes).digest('base64')
  }
  if (c.req.method === 'HEAD') return c.body(null, 200, headers)
  return c.body(new Uint8Array(bytes), 200, headers)
}

/**
 * PUT of a unit's `.tflock` with a LockInfo body: takes the unit's one lock (DESIGN section 3).
 * Held by another: `PreconditionFailed` to Terraform's `If-None-Match: *`, which makes it read
 * the lock object and retry under `-lock-timeout`; `OperationAborted` to a put without it.
 */
export async function putLockObject(c: Context<S3Env>, core: Core, unit: UnitId) {
  const bytes = await readSmallPayload(c, SMALL_BODY_BYTES)
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new S3Error('InvalidArgument', 'a .tflock object holds a LockInfo JSON document')
  }
  const request = parseLockRequest(parsed)
  try {
    const { signedAt } = c.var
    const lock = await core.locks.lock(c.var.principal, unit, request, {
      source: 's3',
      create: true,
      // Kept with the lock: the holder's delete is signed by the same clock.
      ...(signedAt === undefined ? {} : { signedAt }),
    })
    return c.body(null, 200, { ETag: lockEtag(lockBytes(lock)) })
  } catch (error) {
    if (error instanceof LockConflictError && c.req.header('if-none-match')?.trim() === '*') {
      throw new S3Error('PreconditionFailed', error.message, {}, { cause: error })
    }
    throw error
  }
}

/**
 * Reads a small decoded body whole (a LockInfo, a CompleteMultipartUpload document): at most
 * `limit` bytes, and all of them before the small-request timeout, as every small body.
 */
export function readSmallPayload(c: Context<S3Env>, limit: number): Promise<Buffer> {
  const { smallBodyTimeoutMs } = c.var.limits
  return readBounded(c.var.payload.body(requestStream(c)), {
    limit,
    declaredLength: c.var.payload.decodedLength,
    deadline: { at: c.var.started + smallBodyTimeoutMs, timeoutMs: smallBodyTimeoutMs },
  })
}

/**
 * DELETE of a unit's `.tflock`: releases the lock the client saw, and no later one. The `s3`
 * backend names no lock ID here (it read the lock object and compared IDs itself just before), so
 * the principal that took the lock through S3 releases it as its holder; anyone else's delete is
 * a forced unlock (`terraform force-unlock`), which needs `unit:manage` and is recorded in the
 * unit's history. With `If-Match`, only the lock with that ETag is released (412 otherwise).
 * Without it, the request's signing time stands for what the client saw: a delete signed before
 * the lock was taken (a replayed or stale one) releases nothing and answers 412.
 */
export async function deleteLockObject(c: Context<S3Env>, core: Core, unit: UnitId) {
  const { principal, signedAt } = c.var
  const ifMatch = c.req.header('if-match')
  // The ETag names the lock by its ID to core, so that the check and the release are one
  // conditional write of the unit.
  const lockId = ifMatch === undefined ? undefined : await lockIdOf(core, principal, unit, ifMatch)
  const request = {
    source: 's3' as const,
    ...(signedAt === undefined ? {} : { signedAt }),
    ...(lockId === undefined ? { asHolder: true } : { lockId }),
  }
  try {
    await core.locks.unlock(principal, unit, request)
  } catch (error) {
    if (!(error instanceof LockConflictError)) throw error
    noteAudit(c, { action: 'force_unlock' })
    try {
      // The lock may have gone meanwhile: then nothing was forced, and the record says so.
      noteUnlock(
        c,
        await core.locks.unlock(principal, unit, { ...request, asHolder: false, force: true }),
      )
    } catch (forcing) {
      // The lock of that ETag went before the release could name it.
      if (lockId !== undefined && forcing instanceof LockConflictError) {
        throw new S3Error('PreconditionFailed', forcing.message, {}, { cause: forcing })
      }
      throw forcing
    }
  }
  return c.body(null, 204)
}

/** The ID of the lock whose object has the ETag `ifMatch`; `PreconditionFailed` if none has. */
async function lockIdOf(
  core: Core,
  principal: Identity,
  unit: UnitId,
  ifMatch: string,
): Promise<string> {
  const details = await core.units.get(principal, unit)
  const current = details.lock === null ? undefined : lockEtag(lockBytes(details.lock))
  if (details.lock === null || unquote(current ?? '') !== unquote(ifMatch.trim())) {
    throw new S3Error('PreconditionFailed', 'the lock object is not the one If-Match names')
  }
  return details.lock.ID
}

/** GET or HEAD of a unit's state, whole or one byte range (Terraform reads in 5 MiB ranges). */
export async function readStateObject(c: Context<S3Env>, core: Core, unit: UnitId) {
  const { principal } = c.var
  const header = c.req.method === 'HEAD' ? undefined : c.req.header('range')
  if (c.req.method !== 'HEAD' && header === undefined) {
    // A whole read needs no metadata first: the download says what it serves.
    const { version, body } = await core.versions.download(principal, unit)
    noteAudit(c, { version: version.timestamp })
    const headers = objectHeaders(version.sha256, version.timestamp, version.size)
    if (checksumWanted(c)) {
      headers['x-amz-checksum-sha256'] = Buffer.from(version.sha256, 'hex').toString('base64')
    }
    return c.body(toWebStream(body), 200, headers)
  }
  const details = await core.units.get(principal, unit)
  if (details.sha256 === null) throw new S3Error('NoSuchKey', `${unit} has no state yet`)
  if (header === undefined) {
    return c.body(null, 200, objectHeaders(details.sha256, details.updated, details.size))
  }
  const range = parseRangeHeader(header, details.size)
  if (range === 'unsatisfiable') throw invalidRange(details.size)
  // The state may change between the two reads: the answer describes the version served.
  const { version, body } = await core.versions
    .download(principal, unit, range === undefined ? {} : { range })
    .catch((error: unknown) => {
      if (error instanceof RangeNotSatisfiableError) throw invalidRange(error.size)
      throw error
    })
  noteAudit(c, { version: version.timestamp })
  if (range === undefined) {
    return c.body(
      toWebStream(body),
      200,
      objectHeaders(version.sha256, version.timestamp, version.size),
    )
  }
  const headers = objectHeaders(version.sha256, version.timestamp, range.end - range.start + 1)
  headers['Content-Range'] = `bytes ${range.start}-${range.end}/${version.size}`
  return c.body(toWebStream(body), 206, headers)
}

/** The headers of a state object's answer, for `length` bytes of it. */
function objectHeaders(sha256: string, written: string, length: number): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Content-Length': String(length),
    ETag: stateEtag(sha256),
    'Last-Modified': httpDate(written),
    'Accept-Ranges': 'bytes',
  }
}

/**
 * PUT of a unit's state (a whole body; multipart uploads end in the same write). It goes through
 * core's one write path: while the unit is locked only the principal that took the lock through
 * S3 may write (the `s3` backend never names its lock in a write), and Terraform's serial rules
 * hold, except for that holder, whose own Terraform has already checked them (`state push
 * -force` writes a lower serial). `If-None-Match: *` and `If-Match` make the write conditional.
 */
export async function putStateObject(
  c: Context<S3Env>,
  core: Core,
  unit: UnitId,
  body: AsyncIterable<Uint8Array>,
  sizeHint: number | undefined,
) {
  const expectCurrent = expectedCurrentOf(c)
  const version = await core.states.write(c.var.principal, unit, body, {
    source: 's3',
    create: true,
    asHolder: true,
    holderOverridesSerial: true,
    ...(sizeHint === undefined ? {} : { sizeHint }),
    ...(expectCurrent === undefined ? {} : { expectCurrent }),
  })
  noteAudit(c, { version: version.timestamp })
  return version
}

/** The condition of a PUT: `If-None-Match: *`, or `If-Match` on a state's ETag. */
function expectedCurrentOf(
  c: Context<S3Env>,
): { absent: true } | { sha256Prefix: string } | undefined {
  const none = c.req.header('if-none-match')
  if (none !== undefined) {
    if (none.trim() !== '*') {
      throw new S3Error('NotImplemented', 'a PUT takes If-None-Match only as *')
    }
    return { absent: true }
  }
  const match = c.req.header('if-match')
  if (match === undefined) return undefined
  const etag = unquote(match.trim())
  if (!/^[0-9a-f]{64}$/i.test(etag)) {
    throw new S3Error('PreconditionFailed', 'If-Match names no ETag this server gave')
  }
  return { sha256Prefix: etag }
}

function invalidRange(size: number): S3Error {
  return new S3Error('InvalidRange', 'the requested range is not satisfiable', {
    'Content-Range': `bytes */${size}`,
  })
}

/** Whether the client asks for the object's checksum (`x-amz-checksum-mode: ENABLED`). */
function checksumWanted(c: Context<S3Env>): boolean {
  return c.req.header('x-amz-checksum-mode')?.toUpperCase() === 'ENABLED'
}

/** An RFC 3339 time as HTTP writes dates (RFC 9110 IMF-fixdate). */
function httpDate(rfc3339: string): string {
  const ms = Date.parse(rfc3339)
  return new Date(Number.isNaN(ms) ? 0 : ms).toUTCString()
}
