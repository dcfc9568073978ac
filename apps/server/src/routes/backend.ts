import {
  InvalidRequestError,
  LockConflictError,
  parseLockRequest,
  StateNotFoundError,
  toWebStream,
  UnitFrozenError,
  unitIdFromPath,
  UnitNotFoundError,
  type Core,
} from '@cairn/core'
import type { LockInfo } from '@cairn/contract'
import { Hono, type Context } from 'hono'
import { noteAudit, noteUnlock } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { checkStateLength, readJsonBody, SMALL_BODY_BYTES, stateStream } from '../http/body'
import { onError } from '../http/errors'
import { queryText } from '../http/query'
import { rawPathOf } from '../http/unit-path'
import { stateHeaders } from './units'

export interface BackendRoutesDeps {
  core: Core
  maxStateBytes: number
  maxRequestBytes: number
}

const PREFIX = '/v1/backend/'

/**
 * Terraform's `http` backend at `/v1/backend/{id}` (terraform-wire.md part C). GET reads the
 * state (404 means none yet), POST writes it (`?ID=` once Terraform holds the lock), LOCK and
 * UNLOCK carry LockInfo, and an UNLOCK with no body is `terraform force-unlock`, which never sends
 * the ID. The first write or lock creates the unit.
 */
export function backendRoutes(deps: BackendRoutesDeps): Hono<AppEnv> {
  const { core } = deps
  const app = new Hono<AppEnv>()
  const idOf = (c: Context<AppEnv>) => unitIdFromPath(rawPathOf(c.req.url).slice(PREFIX.length))

  app.onError(backendError)

  app.get(`${PREFIX}*`, async (c) => {
    const { version, body } = await core.versions.download(c.var.principal, idOf(c))
    noteAudit(c, { version: version.timestamp })
    return c.body(toWebStream(body), 200, stateHeaders(version))
  })

  const write = async (c: Context<AppEnv>) => {
    const sizeHint = checkStateLength(c, deps.maxStateBytes)
    const lockId = queryText(c, 'ID')
    const md5 = contentMd5(c)
    const version = await core.states.write(c.var.principal, idOf(c), stateStream(c), {
      source: 'http',
      ...(sizeHint === undefined ? {} : { sizeHint }),
      create: true,
      ...(lockId === undefined ? {} : { lockId }),
      ...(md5 === undefined ? {} : { expectedMd5: md5 }),
    })
    noteAudit(c, { version: version.timestamp })
    return c.json(version)
  }
  app.post(`${PREFIX}*`, write)
  app.put(`${PREFIX}*`, write)

  app.on('LOCK', `${PREFIX}*`, async (c) => {
    const body = await readJsonBody(c, SMALL_BODY_BYTES)
    const request = parseLockRequest(body === undefined ? {} : body)
    const lock = await core.locks.lock(c.var.principal, idOf(c), request, {
      source: 'http',
      create: true,
    })
    return c.json(lock)
  })

  app.on('UNLOCK', `${PREFIX}*`, async (c) => {
    const body = await readJsonBody(c, SMALL_BODY_BYTES)
    const force = body === undefined
    if (force) noteAudit(c, { action: 'force_unlock' })
    let lockId: string | undefined
    if (!force) {
      if (
        typeof body !== 'object' ||
        body === null ||
        !('ID' in body) ||
        typeof body.ID !== 'string'
      ) {
        throw new InvalidRequestError(
          'UNLOCK needs a LockInfo body with its ID, or no body to force',
        )
      }
      lockId = body.ID
    }
    const released = await core.locks.unlock(c.var.principal, idOf(c), {
      source: 'http',
      force,
      ...(lockId === undefined ? {} : { lockId }),
    })
    noteUnlock(c, released)
    return c.json(released ?? {})
  })

  app.delete(`${PREFIX}*`, async (c) => {
    await core.units.delete(c.var.principal, idOf(c))
    return c.json({})
  })

  return app
}

/**
 * The `http` backend's dialect (terraform-wire.md part C): a lock conflict on LOCK or UNLOCK
 * answers the holder's LockInfo, 423 to a LOCK (what makes Terraform name the holder and retry
 * under -lock-timeout) and 409 to an UNLOCK; a GET of a unit or state that does not exist is an
 * empty 404 (no state yet). A LOCK of a frozen unit answers 423 too, with a LockInfo that
 * describes the freeze: Terraform prints only the `ID` of it (`HTTP remote state already locked:
 * ID=…`), so the ID is the whole message, reason included.
 * Everything else is answered as on the rest of `/v1`.
 */
function backendError(error: Error, c: Context<AppEnv>): Response {
  const { method } = c.req
  const lockVerb = method === 'LOCK' || method === 'UNLOCK'
  if (lockVerb && error instanceof LockConflictError && error.lock !== null) {
    return c.json(error.lock, method === 'LOCK' ? 423 : 409)
  }
  if (method === 'LOCK' && error instanceof UnitFrozenError) return c.json(freezeLock(error), 423)
  if (
    method === 'GET' &&
    (error instanceof UnitNotFoundError || error instanceof StateNotFoundError)
  ) {
    return c.body(null, 404)
  }
  return onError(error, c)
}

/** The LockInfo a LOCK of a frozen unit answers: the freeze, as if it held the lock. */
function freezeLock(error: UnitFrozenError): LockInfo {
  const { freeze } = error
  return {
    ID: error.message,
    Operation: 'freeze',
    Info: freeze.reason,
    Who: `freeze ${freeze.id} by ${freeze.by}`,
    Version: '',
    Created: freeze.created,
    Path: '',
  }
}

/** The hex MD5 a request declares in `Content-MD5` (base64, RFC 1864), if it sends one. */
function contentMd5(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('content-md5')
  if (header === undefined) return undefined
  const bytes = Buffer.from(header, 'base64')
  if (bytes.length !== 16)
    throw new InvalidRequestError('Content-MD5 must be the base64 of 16 bytes')
  return bytes.toString('hex')
}
