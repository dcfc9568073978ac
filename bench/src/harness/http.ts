import { setTimeout as sleep } from 'node:timers/promises'
import { BenchError } from './bench-error'
import type { BenchServer } from './server-process'

export interface RequestOptions {
  readonly body?: string
  readonly expect?: number
  readonly headers?: Readonly<Record<string, string>>
  /** A Bearer token. */
  readonly token?: string
}

/**
 * One request to a bench server through fetch, its answer parsed as JSON (undefined when empty).
 * Fails with a BenchError naming the server, the request and the answer when the status is not
 * `expect` (200 unless said).
 */
export async function request(
  server: BenchServer,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<unknown> {
  const text = await requestText(server, method, path, options)
  return text === '' ? undefined : (JSON.parse(text) as unknown)
}

/** How long a request answered 503 (the server at its share of uploads) is retried. */
const BUSY_RETRY_MS = 60_000

/**
 * As `request`, the answer as text. A 503 is retried after its `Retry-After` (at most a second
 * apart, for a minute), as Terraform's clients retry it: the server answers one upload past a
 * caller's share of the upload slots so, and a bench that seeds its store many at a time meets it.
 */
export async function requestText(
  server: BenchServer,
  method: string,
  path: string,
  { body, expect = 200, headers = {}, token }: RequestOptions = {},
): Promise<string> {
  const started = performance.now()
  for (;;) {
    let response: Response
    try {
      response = await fetch(`${server.origin}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...headers,
        },
        ...(body === undefined ? {} : { body }),
        redirect: 'manual',
      })
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error)
      throw new BenchError(`${server.label}: ${method} ${path} failed: ${reason}${server.tail()}`)
    }
    const text = await response.text()
    if (response.status === 503 && expect !== 503 && performance.now() - started < BUSY_RETRY_MS) {
      const after = Number(response.headers.get('retry-after') ?? '1')
      await sleep(Math.min(1000, Number.isFinite(after) ? after * 1000 : 1000))
      continue
    }
    return checked(server, method, path, response.status, expect, text)
  }
}

/** The answer's text, or a BenchError naming the request when its status is not `expect`. */
function checked(
  server: BenchServer,
  method: string,
  path: string,
  status: number,
  expect: number,
  text: string,
): string {
  if (status !== expect) {
    throw new BenchError(
      `${server.label}: ${method} ${path} answered ${status}, expected ${expect}: ${text.slice(0, 300)}`,
    )
  }
  return text
}

/** Runs `job(i)` for every i in [0, count), `limit` at a time. */
export async function pool(
  count: number,
  limit: number,
  job: (index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next
      next += 1
      await job(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}

/** A page of a `/v1` listing of units (`/v1/units`, `/v1/status`). */
interface UnitsPage {
  readonly units: readonly { readonly id: string }[]
  readonly next_cursor: string | null
}

/**
 * Every page of a listing; `path` already holds a query (`?limit=1000`). The IDs listed, and how
 * many pages it took.
 */
export async function walkPages(
  fetchPage: (path: string) => Promise<unknown>,
  path: string,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = []
  let pages = 0
  let cursor: string | null = null
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`
    const page = (await fetchPage(`${path}${query}`)) as UnitsPage
    pages += 1
    for (const unit of page.units) ids.push(unit.id)
    cursor = page.next_cursor
  } while (cursor !== null)
  return { ids, pages }
}
