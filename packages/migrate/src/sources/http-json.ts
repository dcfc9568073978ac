import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import { SourceError } from '../source'

/** How long one request to a source may take before the import calls it failed. */
const TIMEOUT_MS = 60_000

/** A GET to a source's API: its JSON, or a SourceError naming the URL and the status. */
export async function getJson(
  url: URL,
  headers: Record<string, string>,
  what: string,
): Promise<unknown> {
  const response = await get(url, headers, what)
  const text = await response.text()
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new SourceError(`${what}: ${url.href} answered something that is not JSON`)
  }
}

/** A GET whose answer must be 2xx (or `allow`ed); otherwise a SourceError. */
export async function get(
  url: URL,
  headers: Record<string, string>,
  what: string,
  allow: readonly number[] = [],
): Promise<Response> {
  let response: Response
  try {
    response = await fetch(url, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) })
  } catch (error) {
    throw new SourceError(`${what}: ${url.origin} cannot be reached (${reason(error)})`, {
      cause: error,
    })
  }
  if (!response.ok && !allow.includes(response.status)) {
    await response.body?.cancel()
    throw new SourceError(`${what}: ${url.href} answered ${response.status}`)
  }
  return response
}

/** A response's body as a Node stream (an `AsyncIterable` of chunks). */
export function bodyOf(response: Response): AsyncIterable<Uint8Array> {
  if (response.body === null) return Readable.from([])
  return Readable.fromWeb(response.body as WebReadableStream<Uint8Array>)
}

function reason(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
    return `${error.message}${cause}`
  }
  return String(error)
}
