import { type AuthService } from '@cairn/auth'
import type { Clock } from '@cairn/core'
import {
  parseCredentials,
  unverifiedPayload,
  verifySignature,
  type SignedRequest,
} from '@cairn/sigv4'
import type { Context, MiddlewareHandler } from 'hono'
import { ANONYMOUS } from '../http/principal'
import { rawPathOf } from '../http/unit-path'
import { S3Error } from './s3-errors'
import { rawUrlOf, type S3Env } from './s3-env'

export interface S3AuthOptions {
  /** Undefined when authentication is disabled: every caller is `anonymous`. */
  auth: AuthService | undefined
  clock: Clock
}

/**
 * Signature Version 4 for every `/s3` request (DESIGN section 11): the credentials are read from
 * the `Authorization` header or a presigned query, the session token (an access JWT with audience
 * `s3`, from `POST /v1/auth/issue-s3-creds`) names the caller and gives the secret the request
 * must be signed with, and the body is decoded and checked as it streams. With authentication
 * disabled nothing is verified, but an aws-chunked body is still decoded.
 */
export function s3Authenticate(options: S3AuthOptions): MiddlewareHandler<S3Env> {
  const { auth, clock } = options
  return async (c, next) => {
    const request = signedRequestOf(c)
    if (auth === undefined) {
      c.set('principal', ANONYMOUS)
      c.set('payload', unverifiedPayload(request))
      await next()
      return
    }
    const credentials = parseCredentials(request, { service: 's3', now: clock.now() })
    const token = credentials.securityToken
    if (token === undefined) {
      throw new S3Error(
        'InvalidAccessKeyId',
        'Cairn knows an access key only with its session token (X-Amz-Security-Token): get both from POST /v1/auth/issue-s3-creds, or `cairn creds --json` as a credential_process',
      )
    }
    const { identity, secretAccessKey } = await auth.s3.verify(token, credentials.accessKeyId)
    const verified = await verifySignature(request, credentials, secretAccessKey)
    c.set('principal', identity)
    c.set('payload', verified)
    // Checked by the signature, so a replayed request keeps the time it was first signed at.
    c.set('signedAt', credentials.date)
    await next()
  }
}

/** The request as the client signed it: method, undecoded path and query, and its headers. */
function signedRequestOf(c: Context<S3Env>): SignedRequest {
  const url = rawUrlOf(c)
  const mark = url.indexOf('?')
  const distinct = (c.env as S3Env['Bindings'] | undefined)?.incoming?.headersDistinct
  const headers: Record<string, string> = {}
  if (distinct === undefined) {
    c.req.raw.headers.forEach((value, name) => {
      headers[name] = value
    })
  } else {
    // AWS joins a repeated header's values with ',' (Node would join most with ', ').
    for (const [name, values] of Object.entries(distinct)) {
      if (values !== undefined) headers[name] = values.join(',')
    }
  }
  return {
    method: c.req.method,
    path: rawPathOf(url),
    query: mark === -1 ? '' : url.slice(mark + 1),
    headers,
  }
}
