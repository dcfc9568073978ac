import { bodyOf, InvalidRequestError, StateTooLargeError } from '@cairn/core'
import type { Context } from 'hono'
import type { AppEnv } from './app-env'
import { HttpError } from './errors'

/**
 * The request body as a stream. Under @hono/node-server it is read straight from Node's request,
 * which is faster than the web stream hono would build over it; `app.request()` gives the latter.
 */
export function requestStream(c: Context<AppEnv>): AsyncIterable<Uint8Array> {
  const env = c.env as AppEnv['Bindings'] | undefined
  const incoming = env?.incoming
  // A reader that stops early (a refused body) must not destroy the request: the connection
  // stays open for the response and the next request, and the server drains what is left.
  if (incoming !== undefined && !incoming.readableDidRead) {
    return { [Symbol.asyncIterator]: () => incoming.iterator({ destroyOnReturn: false }) }
  }
  return c.req.raw.body ?? bodyOf(new Uint8Array(0))
}

/**
 * Refuses a state body whose declared length is over the limit before reading any of it, and
 * returns that length (undefined when the client did not declare one).
 */
export function checkStateLength(c: Context<AppEnv>, limit: number): number | undefined {
  const length = declaredLength(c)
  if (length !== undefined && length > limit) throw new StateTooLargeError(limit)
  return length
}

/**
 * Reads a small JSON request body, up to `limit` bytes. An empty body gives undefined.
 *
 * @throws HttpError `request_too_large`, InvalidRequestError when it is not JSON
 */
export async function readJsonBody(c: Context<AppEnv>, limit: number): Promise<unknown> {
  if ((declaredLength(c) ?? 0) > limit) throw tooLarge(limit)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of requestStream(c)) {
    size += chunk.byteLength
    if (size > limit) throw tooLarge(limit)
    chunks.push(chunk)
  }
  if (size === 0) return undefined
  const text = Buffer.concat(chunks).toString('utf8')
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new InvalidRequestError('the request body is not JSON')
  }
}

/** Reads a JSON object body; an empty body counts as `{}`. */
export async function readJsonObject(
  c: Context<AppEnv>,
  limit: number,
): Promise<Record<string, unknown>> {
  const read = await readJsonBody(c, limit)
  const body = read === undefined ? {} : read
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new InvalidRequestError('the request body must be a JSON object')
  }
  return body as Record<string, unknown>
}

function declaredLength(c: Context<AppEnv>): number | undefined {
  const header = c.req.header('content-length')
  return header === undefined || !/^\d+$/.test(header) ? undefined : Number(header)
}

function tooLarge(limit: number): HttpError {
  return new HttpError('request_too_large', `the request body is larger than ${limit} bytes`)
}
