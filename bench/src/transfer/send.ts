import { createHash } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import type { ClientRequest } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { BenchError } from '../harness/bench-error'
import type { BenchServer } from '../harness/server-process'
import { stateBytes } from './state-file'
import type { StateFile } from './state-file'

export interface SendOptions {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string>>
  /** The whole body, or a function that writes the request and ends it. */
  readonly body?: Buffer | string | ((request: ClientRequest) => Promise<void>)
  readonly expect: number
  /** Keep the answer's text (up to 64 KiB). */
  readonly keep?: boolean
  /** Hash the answer's bytes. */
  readonly hash?: boolean
}

export interface Sent {
  /** From before the request to the answer's last byte. */
  readonly ms: number
  readonly bytes: number
  readonly text: string
  readonly sha256: string | undefined
}

function exitNote(server: BenchServer): string {
  const exit = server.exit()
  return exit === undefined ? '' : ` (${server.label} stopped: ${exit})${server.tail()}`
}

/**
 * One request through node:http on the server's kept-alive connection. The answer is read to its
 * end: counted, kept when `keep` or when its status is not the one expected, or hashed.
 */
export function send(server: BenchServer, options: SendOptions): Promise<Sent> {
  const { method, path, headers = {}, body, expect, keep = false, hash = false } = options
  return new Promise((resolve, reject) => {
    // A failed connection often means the server died: wait a moment to say so.
    const fail = (error: unknown) => {
      if (error instanceof BenchError) {
        reject(error)
        return
      }
      const reason = error instanceof Error ? error.message : String(error)
      void Promise.race([server.exited, sleep(500, undefined, { ref: false })]).then(() => {
        reject(
          new BenchError(
            `${method} ${path} to ${server.label} failed: ${reason}${exitNote(server)}`,
          ),
        )
      })
    }
    const started = performance.now()
    const request = httpRequest({
      host: '127.0.0.1',
      port: server.port,
      method,
      path,
      headers,
      agent: server.agent,
    })
    request.once('error', fail)
    request.once('response', (response) => {
      const expected = response.statusCode === expect
      const digest = hash && expected ? createHash('sha256') : undefined
      const kept: Buffer[] = []
      let keptBytes = 0
      let bytes = 0
      let ended = false
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (digest !== undefined) digest.update(chunk)
        else if ((keep || !expected) && keptBytes < 64 * 1024) {
          kept.push(chunk)
          keptBytes += chunk.length
        }
      })
      response.once('end', () => {
        ended = true
        const ms = performance.now() - started
        const text = Buffer.concat(kept).toString('utf8')
        if (!expected) {
          fail(
            new BenchError(
              `${method} ${path} to ${server.label}: status ${response.statusCode ?? 0}, expected ${expect}: ${text.slice(0, 2000)}`,
            ),
          )
          return
        }
        resolve({ ms, bytes, text, sha256: digest?.digest('hex') })
      })
      response.once('error', fail)
      response.once('close', () => {
        if (!ended) fail(new Error('the answer stopped before its end'))
      })
    })
    if (typeof body === 'function') body(request).catch(fail)
    else request.end(body)
  })
}

/**
 * Streams the state with `serial` patched into its first bytes to `path` (any path does on the
 * baseline) with a `Content-Length`; the answer is kept.
 */
export function uploadState(
  server: BenchServer,
  state: StateFile,
  serial: number,
  path: string,
  token?: string,
): Promise<Sent> {
  return send(server, {
    method: 'POST',
    path,
    headers: {
      'Content-Type': 'application/json',
      'Content-Length': String(state.bytes),
      ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
    },
    expect: 200,
    keep: true,
    body: (request) => pipeline(Readable.from(stateBytes(state, serial)), request),
  })
}

/** Downloads `path`, dropping (or hashing) the bytes; fails unless exactly `bytes` came. */
export async function downloadState(
  server: BenchServer,
  path: string,
  bytes: number,
  options: { readonly token?: string; readonly hash?: boolean } = {},
): Promise<Sent> {
  const result = await send(server, {
    method: 'GET',
    path,
    headers: options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` },
    expect: 200,
    hash: options.hash ?? false,
  })
  if (result.bytes !== bytes) {
    throw new BenchError(`${server.label}: ${path} gave ${result.bytes} bytes, expected ${bytes}`)
  }
  return result
}

/** A version as `/v1` answers an upload. */
export interface VersionAnswer {
  readonly size: number
  readonly serial: number
  readonly sha256: string
}

/** The version an upload answered; fails unless it holds `bytes` bytes at `serial`. */
export function checkVersion(
  server: BenchServer,
  sent: Sent,
  bytes: number,
  serial: number,
): VersionAnswer {
  const version = JSON.parse(sent.text) as VersionAnswer
  if (version.size !== bytes || version.serial !== serial) {
    throw new BenchError(
      `${server.label} stored ${version.size} bytes with serial ${version.serial}, expected ${bytes} and ${serial}`,
    )
  }
  return version
}
