import { createHash, randomUUID } from 'node:crypto'
import type { LockInfo } from '@cairn/contract'
import { expect } from 'vitest'

/** An answer read whole: status, headers, the raw bytes, and the body parsed as JSON if it is. */
export interface Reply {
  status: number
  headers: Headers
  bytes: Uint8Array
  text: string
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  body: unknown
}

export interface SendOptions {
  /** Sent as `JSON.stringify(json)`. */
  json?: unknown
  /** Sent as it is; a stream goes out chunked, with no Content-Length. */
  body?: string | Uint8Array | ReadableStream<Uint8Array>
  headers?: Record<string, string>
}

/** The `/v1` wire shape of a unit (DESIGN section 2). */
export interface UnitBody {
  id: string
  created: string
  updated: string
  size: number
  serial: number | null
  lineage: string | null
  sha256: string | null
  locked: boolean
  lock: LockInfo | null
  lock_stale: boolean
  tags: string[]
  version_count: number
}

/** The `/v1` wire shape of a version (DESIGN section 4). */
export interface VersionBody {
  timestamp: string
  sha256: string
  md5: string
  size: number
  serial: number | null
  lineage: string | null
  author: string
  source: string
}

export interface ErrorBody {
  error: string
  message: string
  [field: string]: unknown
}

/** RFC 3339 in UTC with milliseconds, as the server writes version timestamps. */
export const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * A client for one running server: every call goes over a real socket with fetch. Given a server
 * handle (`useServer`), it reads the URL at each call, so it can be made before the server starts.
 */
export class Api {
  readonly #server: string | { readonly url: string }

  constructor(server: string | { readonly url: string }) {
    this.#server = server
  }

  get baseUrl(): string {
    return typeof this.#server === 'string' ? this.#server : this.#server.url
  }

  async send(method: string, path: string, options: SendOptions = {}): Promise<Reply> {
    const body = options.json === undefined ? options.body : JSON.stringify(options.json)
    const init: RequestInit = { method, headers: options.headers ?? {} }
    if (body !== undefined) init.body = body
    if (body instanceof ReadableStream) init.duplex = 'half'
    const response = await fetch(`${this.baseUrl}${path}`, init)
    const bytes = new Uint8Array(await response.arrayBuffer())
    const text = new TextDecoder().decode(bytes)
    return { status: response.status, headers: response.headers, bytes, text, body: parse(text) }
  }

  get(path: string, headers: Record<string, string> = {}): Promise<Reply> {
    return this.send('GET', path, { headers })
  }

  /** Creates a unit through `POST /v1/units` and fails the test unless it answers 201. */
  async createUnit(id: string, tags?: string[]): Promise<UnitBody> {
    const reply = await this.send('POST', '/v1/units', {
      json: tags === undefined ? { id } : { id, tags },
    })
    expect(reply.status, reply.text).toBe(201)
    return reply.body as UnitBody
  }

  /** The unit's metadata, failing the test unless it exists. */
  async unit(id: string): Promise<UnitBody> {
    const reply = await this.get(`/v1/units/${id}`)
    expect(reply.status, reply.text).toBe(200)
    return reply.body as UnitBody
  }

  /** Uploads a state and fails the test unless it is accepted. */
  async upload(id: string, state: string, query = ''): Promise<VersionBody> {
    const reply = await this.send('POST', `/v1/units/${id}/upload${query}`, { body: state })
    expect(reply.status, reply.text).toBe(200)
    return reply.body as VersionBody
  }

  /** Locks a unit through `/v1` and fails the test unless it is granted. */
  async lock(id: string, info: Partial<LockInfo> = lockInfo()): Promise<LockInfo> {
    const reply = await this.send('POST', `/v1/units/${id}/lock`, { json: info })
    expect(reply.status, reply.text).toBe(200)
    return reply.body as LockInfo
  }

  /**
   * Runs `refused` and checks that the unit is just as it was before: the same current version,
   * version count and lock. For every write the server turns down.
   */
  async expectUnchangedBy(id: string, refused: () => Promise<void>): Promise<void> {
    const before = await this.unit(id)
    await refused()
    const after = await this.unit(id)
    expect(pick(after)).toEqual(pick(before))
  }
}

function pick(unit: UnitBody) {
  const { serial, lineage, sha256, size, version_count, locked, lock, updated } = unit
  return { serial, lineage, sha256, size, version_count, locked, lock, updated }
}

function parse(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/**
 * Checks an error answer: its status, `application/json`, and a body with the code in `error` and
 * a non-empty `message` (DESIGN section 6: every error body carries both). Returns the body.
 */
export function expectError(reply: Reply, status: number, code: string): ErrorBody {
  expect(reply.status, reply.text).toBe(status)
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/)
  const body = reply.body as ErrorBody
  expect(body.error).toBe(code)
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(0)
  return body
}

/** A LockInfo exactly as Terraform 1.11 sends it (terraform-wire.md D1). */
export function lockInfo(overrides: Partial<LockInfo> = {}): LockInfo {
  return {
    ID: randomUUID(),
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'root@vm',
    Version: '1.11.4',
    Created: '2026-11-22T03:51:53.193653099Z',
    Path: '',
    ...overrides,
  }
}

export function md5Base64(data: string | Uint8Array): string {
  return createHash('md5').update(data).digest('base64')
}

export function md5Hex(data: string | Uint8Array): string {
  return createHash('md5').update(data).digest('hex')
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/** A stream of `text` in chunks of `size` bytes: fetch sends it chunked, with no Content-Length. */
export function streamOf(text: string, size = 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let at = 0
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.length) {
        controller.close()
        return
      }
      controller.enqueue(bytes.slice(at, at + size))
      at += size
    },
  })
}

/** A JSON object of exactly `size` bytes (`{"pad":"xxx…"}` plus `extra` fields first). */
export function jsonOfSize(size: number, extra: Record<string, unknown> = {}): string {
  const head = JSON.stringify({ ...extra, pad: '' })
  const text = `${head.slice(0, -2)}${'x'.repeat(size - head.length)}"}`
  expect(Buffer.byteLength(text)).toBe(size)
  return text
}

/** The test kit's one `waitFor`, here too for the suites that import it from this module. */
export { waitFor } from '@cairn/testkit'
