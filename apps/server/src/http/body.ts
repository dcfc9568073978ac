import { bodyOf, InvalidRequestError, readBounded, StateTooLargeError } from '@cairn/core'
import type { Socket } from 'node:net'
import type { Context } from 'hono'
import type { AppEnv } from './app-env'
import { atLeastRate } from './min-rate'
import { claimUploadSlot } from './upload-slots'

/**
 * The largest body of the routes that take a few fields (logins, tokens, OAuth, LockInfo): an ID
 * token or a LockInfo is a few KiB.
 */
export const SMALL_BODY_BYTES = 64 * 1024

/**
 * The request body as a stream. Under @hono/node-server it is read straight from Node's request,
 * which is faster than the web stream hono would build over it; `app.request()` gives the latter.
 */
export function requestStream(c: Context<AppEnv>): AsyncIterable<Uint8Array> {
  const incoming = incomingOf(c)
  // A reader that stops early (a refused body) must not destroy the request: the connection
  // stays open for the response, which then closes it (see `closeIfUnread`).
  if (incoming !== undefined && !incoming.readableDidRead) {
    return { [Symbol.asyncIterator]: () => incoming.iterator({ destroyOnReturn: false }) }
  }
  return c.req.raw.body ?? bodyOf(new Uint8Array(0))
}

/**
 * A state body being uploaded, its bytes counted as they are read (`cairn_state_bytes_in_total`).
 * `body` is the request stream decoded as its surface needs (S3's chunked signing); the request
 * stream itself by default. Small bodies (JSON, LockInfo) are read with `requestStream`, uncounted.
 *
 * Called once the caller is known: the upload's slot is counted against the caller's share first
 * (`claimUploadSlot`), and a body that arrives slower than the server's floor is cut off
 * (`atLeastRate`).
 *
 * @throws HttpError server_busy when the caller has its share of uploads in flight already
 */
export function stateStream(
  c: Context<AppEnv>,
  body: AsyncIterable<Uint8Array> = requestStream(c),
): AsyncIterable<Uint8Array> {
  claimUploadSlot(c)
  const rate = (c.var as Partial<AppEnv['Variables']>).limits?.minUploadRate
  return metered(c, rate === undefined ? body : atLeastRate(body, rate))
}

async function* metered(
  c: Context<AppEnv>,
  body: AsyncIterable<Uint8Array>,
): AsyncGenerator<Uint8Array> {
  const meter = (c.var as Partial<AppEnv['Variables']>).meter
  for await (const chunk of body) {
    meter?.stateIn(chunk.byteLength)
    yield chunk
  }
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
 * Reads a small request body whole, the one way every route but the state uploads reads one: at
 * most `limit` bytes (a larger declared length is refused unread, a longer chunked body is cut
 * off), and all of it before the small-request timeout.
 *
 * @throws RequestTooLargeError, RequestTimeoutError
 */
export function readSmallBody(c: Context<AppEnv>, limit: number): Promise<Buffer> {
  const { smallBodyTimeoutMs } = c.var.limits
  return readBounded(requestStream(c), {
    limit,
    declaredLength: declaredLength(c),
    deadline: { at: c.var.started + smallBodyTimeoutMs, timeoutMs: smallBodyTimeoutMs },
  })
}

/**
 * Reads a small JSON request body, up to `limit` bytes. An empty body gives undefined.
 *
 * @throws RequestTooLargeError, RequestTimeoutError, InvalidRequestError when it is not JSON
 */
export async function readJsonBody(c: Context<AppEnv>, limit: number): Promise<unknown> {
  const bytes = await readSmallBody(c, limit)
  if (bytes.byteLength === 0) return undefined
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown
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

/**
 * Reads an `application/x-www-form-urlencoded` body (RFC 6749 section 4.1.3), parsed only once
 * it is known to be small.
 */
export async function readForm(c: Context<AppEnv>, limit: number): Promise<URLSearchParams> {
  const type = c.req.header('content-type') ?? ''
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new InvalidRequestError('the request body must be application/x-www-form-urlencoded')
  }
  return new URLSearchParams((await readSmallBody(c, limit)).toString('utf8'))
}

/**
 * Marks the response to close its connection when the request's body was not read to its end,
 * instead of letting Node read and discard the rest (as much as the client declares or keeps
 * sending) before the next request. An authenticated caller's refused request (a lock conflict, a
 * state that does not parse) keeps its connection: its body is within the limits, and a client
 * still sending it reads the answer more reliably than a reset. A body over its limit, too slow,
 * or from a caller who is not known closes the connection.
 */
export function closeIfUnread(c: Context<AppEnv>): void {
  if (!closesUnread(c)) return
  const env = c.env as Required<AppEnv['Bindings']>
  // Before the head is written, this makes Node send `Connection: close` and end the socket.
  env.outgoing.shouldKeepAlive = false
  lingerOnClose(env.incoming.socket)
}

/**
 * Whether the answer closes the connection with the request's body unread (see
 * `closeIfUnread`): then nothing may hold the answer back, or the client's bytes keep arriving.
 */
export function closesUnread(c: Context<AppEnv>): boolean {
  const env = c.env as AppEnv['Bindings'] | undefined
  if (env?.incoming === undefined || env.outgoing === undefined || env.incoming.complete) {
    return false
  }
  const { status } = c.res
  const known = (c.var as Partial<AppEnv['Variables']>).principal !== undefined
  return !(known && status < 500 && status !== 408 && status !== 413)
}

/** How long a closing connection stays open, unread, for its client to read the answer. */
const LINGER_MS = 2_000

/**
 * Closing a socket while the client's bytes are still arriving makes the kernel answer with a
 * reset, which can reach the client before it has read the answer (a 413 it never sees). So the
 * socket is half-closed once the answer is out and left open a moment for the client to read it,
 * but no longer read: what the client still sends fills the kernel's buffers, and TCP stops it.
 * Only then is the socket destroyed.
 */
function lingerOnClose(socket: Socket): void {
  const stopReading = (): void => {
    socket.pause()
    // While Node's HTTP parser consumes the socket's handle directly, pausing the stream does not
    // stop the reads: stop them at the handle.
    ;(socket as unknown as { _handle?: { readStop?: () => number } })._handle?.readStop?.()
  }
  socket.destroySoon = () => {
    socket.end()
    stopReading()
    // Node dumps an unread request body as the answer finishes, which resumes reading on the
    // next tick: stop again once that has run.
    setImmediate(stopReading)
    const timer = setTimeout(() => socket.destroy(), LINGER_MS)
    timer.unref()
    socket.once('close', () => {
      clearTimeout(timer)
    })
  }
}

function incomingOf(c: Context<AppEnv>) {
  return (c.env as AppEnv['Bindings'] | undefined)?.incoming
}

function declaredLength(c: Context<AppEnv>): number | undefined {
  const header = c.req.header('content-length')
  return header === undefined || !/^\d+$/.test(header) ? undefined : Number(header)
}
