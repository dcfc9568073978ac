import type { Context } from 'hono'
import type { AppEnv } from '../http/app-env'
import { rawPathOf } from '../http/unit-path'
import { S3Error } from './s3-errors'

/** What `/s3` carries through a request: the server's, its decoded body included. */
export type S3Env = AppEnv

/** Where `/s3` is mounted. */
export const S3_PREFIX = '/s3'

/** The bucket and key of a path-style request (`/s3/<bucket>/<key>`), decoded. */
export interface Addressed {
  bucket: string
  /** The key; '' for a request on the bucket itself. */
  key: string
}

/**
 * The bucket and key of the request, read from the undecoded path so that a key's `%2F` is a `/`
 * of the key, as S3 reads it.
 *
 * @throws S3Error `InvalidArgument` for percent-encoding that does not decode
 */
export function addressOf(c: Context<S3Env>): Addressed {
  const raw = rawPathOf(rawUrlOf(c)).slice(S3_PREFIX.length + 1)
  const slash = raw.indexOf('/')
  const rawBucket = slash === -1 ? raw : raw.slice(0, slash)
  const rawKey = slash === -1 ? '' : raw.slice(slash + 1)
  try {
    return { bucket: decodeURIComponent(rawBucket), key: decodeURIComponent(rawKey) }
  } catch {
    throw new S3Error('InvalidArgument', 'the path is not valid percent-encoding')
  }
}

/** The request target as the client sent it (Node's `url`), or the URL hono built in tests. */
export function rawUrlOf(c: Context<S3Env>): string {
  const incoming = (c.env as S3Env['Bindings'] | undefined)?.incoming
  const target = incoming?.url
  if (target === undefined) return c.req.url
  return target.startsWith('/') ? `http://host${target}` : target
}

/** The query of the request, decoded. */
export function queryOf(c: Context<S3Env>): URLSearchParams {
  const url = rawUrlOf(c)
  const mark = url.indexOf('?')
  return new URLSearchParams(mark === -1 ? '' : url.slice(mark + 1))
}
