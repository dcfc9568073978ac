import { ErrorBodySchema } from '@cairn/contract'
import * as v from 'valibot'
import { apiError, CairnError, unreachable } from './errors'
import type { TokenProvider } from './token-provider'

/** A request body: JSON, bytes, text, or a stream (sent as it is read, never buffered). */
export type RequestBody =
  | { json: unknown }
  | { bytes: string | Uint8Array }
  | { stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> }

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>
  body?: RequestBody
  headers?: Record<string, string>
  /** Send no token even if the client has one (the login endpoints). */
  anonymous?: boolean
}

export interface TransportOptions {
  baseUrl: string
  tokens?: TokenProvider
  fetch?: typeof fetch
  userAgent?: string
  /** How many times a request answered 503 `server_busy` is sent again; `DEFAULT_BUSY_RETRIES`. */
  busyRetries?: number
  /** How a wait is spent (a test's clock); `setTimeout` unless given. */
  sleep?: (ms: number) => Promise<void>
}

/** How many times a request the server was too busy to take is sent again, unless told. */
export const DEFAULT_BUSY_RETRIES = 3
/** The longest `Retry-After` waited for: a server that asks for longer gets its error shown. */
export const LONGEST_BUSY_WAIT_MS = 10_000

/**
 * The one place requests are made: the token header, the base URL, error bodies turned into typed
 * errors, one retry with a fresh token after a 401 when the body can be sent again, and a few
 * more after a 503 `server_busy` (the server took nothing of the request: it had as many
 * connections, uploads or heavy reads as it allows), each after the `Retry-After` it asked for.
 */
export class Transport {
  readonly baseUrl: string
  readonly #tokens: TokenProvider | undefined
  readonly #fetch: typeof fetch
  readonly #userAgent: string | undefined
  readonly #busyRetries: number
  readonly #sleep: (ms: number) => Promise<void>

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.#tokens = options.tokens
    this.#fetch = options.fetch ?? fetch
    this.#userAgent = options.userAgent
    this.#busyRetries = options.busyRetries ?? DEFAULT_BUSY_RETRIES
    this.#sleep =
      options.sleep ??
      ((ms) =>
        new Promise((resolve) => {
          setTimeout(resolve, ms)
        }))
  }

  /**
   * Sends a request and answers the response of a 2xx status.
   * @throws CairnApiError, CertificateError, CairnError
   */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const response = await this.request(method, path, options)
    if (!response.ok) throw await this.#failure(response)
    return response
  }

  /**
   * Sends a request as `send` does (the token, one retry with a fresh token after a 401, a few
   * after a 503 `server_busy`) and answers the response whatever its status: for a caller that
   * shows the answer as it is.
   * @throws CertificateError, CairnError when the server cannot be reached
   */
  async request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    // A stream is read as it is sent, so it cannot be sent twice.
    const replayable = options.body === undefined || !('stream' in options.body)
    for (let retry = 0; ; retry += 1) {
      const response = await this.#authorized(method, path, options, replayable)
      if (response.status !== 503 || !replayable || retry >= this.#busyRetries) return response
      const busy = await busyWait(response)
      if (busy.waitMs === undefined) return busy.response
      await this.#sleep(busy.waitMs)
    }
  }

  /** One request with the token, and once more with a fresh one after a 401. */
  async #authorized(
    method: string,
    path: string,
    options: RequestOptions,
    replayable: boolean,
  ): Promise<Response> {
    const token = options.anonymous === true ? undefined : await this.#tokens?.token()
    let response = await this.#attempt(method, path, options, token)
    if (
      response.status === 401 &&
      token !== undefined &&
      replayable &&
      this.#tokens?.refresh !== undefined
    ) {
      const fresh = await this.#tokens.refresh()
      if (fresh !== undefined) {
        await response.body?.cancel()
        response = await this.#attempt(method, path, options, fresh)
      }
    }
    return response
  }

  /** Sends a request and parses its JSON answer with `schema`. */
  async json<T>(
    method: string,
    path: string,
    schema: v.GenericSchema<unknown, T>,
    options: RequestOptions = {},
  ): Promise<T> {
    const response = await this.send(method, path, options)
    const result = v.safeParse(schema, await response.json().catch(() => undefined))
    if (!result.success) {
      throw new CairnError(
        `${method} ${path} answered a body this client does not understand: ${result.issues[0].message}`,
      )
    }
    return result.output
  }

  async #attempt(
    method: string,
    path: string,
    options: RequestOptions,
    token: string | undefined,
  ): Promise<Response> {
    const url = new URL(`${this.baseUrl}${path}`)
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const headers = new Headers(options.headers)
    if (token !== undefined) headers.set('Authorization', `Bearer ${token}`)
    if (this.#userAgent !== undefined) headers.set('User-Agent', this.#userAgent)
    const init: RequestInit & { duplex?: 'half' } = { method, headers }
    const body = options.body
    if (body !== undefined) {
      // JSON unless the caller named another type.
      if (!headers.has('Content-Type')) headers.set('Content-Type', 'application/json')
      if ('json' in body) {
        init.body = JSON.stringify(body.json)
      } else if ('bytes' in body) {
        init.body = body.bytes
      } else {
        init.body = toStream(body.stream)
        init.duplex = 'half'
      }
    }
    try {
      return await this.#fetch(url, init)
    } catch (error) {
      throw unreachable(this.baseUrl, error)
    }
  }

  async #failure(response: Response): Promise<Error> {
    const text = await response.text().catch(() => '')
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    const body = v.safeParse(ErrorBodySchema, parsed)
    if (body.success) return apiError(response.status, body.output)
    return apiError(response.status, {
      error: response.status === 404 ? 'not_found' : 'http_error',
      message: `HTTP ${response.status}${text === '' ? '' : `: ${text.slice(0, 200)}`}`,
    })
  }
}

/**
 * How long a 503 asks to wait before the same request is sent again: its `Retry-After` (seconds,
 * or a date; 1 s when absent) when its body says `server_busy` and the wait is at most
 * `LONGEST_BUSY_WAIT_MS`, else undefined. The body is read, so the response handed back is a copy.
 */
async function busyWait(response: Response): Promise<{ waitMs?: number; response: Response }> {
  const text = await response.text().catch(() => '')
  const copy = new Response(text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  })
  let code: unknown
  try {
    code = (JSON.parse(text) as { error?: unknown } | null)?.error
  } catch {
    code = undefined
  }
  if (code !== 'server_busy') return { response: copy }
  const header = response.headers.get('Retry-After')?.trim()
  let waitMs = 1_000
  if (header !== undefined && header !== '') {
    waitMs = /^\d+$/.test(header) ? Number(header) * 1_000 : Date.parse(header) - Date.now()
  }
  if (!Number.isFinite(waitMs) || waitMs > LONGEST_BUSY_WAIT_MS) return { response: copy }
  // Up to a fifth more, so that clients turned away together do not all come back together.
  return { waitMs: Math.max(0, waitMs) * (1 + Math.random() / 5), response: copy }
}

function toStream(
  source: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
): ReadableStream<Uint8Array> {
  if (source instanceof ReadableStream) return source
  const iterator = source[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next: IteratorResult<Uint8Array, unknown> = await iterator.next()
      if (next.done === true) controller.close()
      else controller.enqueue(next.value)
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

/** A unit ID in a path: each segment percent-encoded, the slashes kept. */
export function unitPath(id: string): string {
  return id
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/')
}
