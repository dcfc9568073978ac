import { LockConflictError } from '@cairn/core'
import type { Context } from 'hono'
import { routeOf, surfaceOf } from './request-labels'
import type { ServerMetrics, Surface } from './server-metrics'

/** What a request counts as it runs: the state bytes it receives, under its surface. */
export interface RequestMeter {
  readonly surface: Surface
  stateIn(bytes: number): void
}

/** Starts counting a request; `end` records it once it is answered. */
export function meterRequest(metrics: ServerMetrics, c: Context) {
  const surface = surfaceOf(c.req.path)
  const started = performance.now()
  const meter: RequestMeter = {
    surface,
    stateIn: (bytes) => {
      metrics.stateBytesIn.inc({ surface }, bytes)
    },
  }
  const end = (): void => {
    const route = routeOf(c)
    const method = c.req.method
    metrics.requests.inc({ surface, route, method, status: String(c.res.status) })
    metrics.requestDuration.observe(
      { surface, route, method },
      (performance.now() - started) / 1000,
    )
    if (isLockConflict(c.error)) metrics.lockConflicts.inc({ surface })
    if (isStateDownload(surface, c)) {
      countBody(c, (bytes) => {
        metrics.stateBytesOut.inc({ surface }, bytes)
      })
    }
  }
  return { meter, end }
}

/** A refusal by the lock, as each surface's dialect renders it (some wrap core's error). */
function isLockConflict(error: unknown): boolean {
  return (
    error instanceof LockConflictError ||
    (error instanceof Error && error.cause instanceof LockConflictError)
  )
}

/**
 * Whether the answer is a state body: `/v1`'s downloads, the `http` backend's GET, TFE's
 * state-version download, an S3 GET of a state object (not of its `.tflock`, nor a listing).
 */
function isStateDownload(surface: Surface, c: Context): boolean {
  const { status } = c.res
  if (c.req.method !== 'GET' || (status !== 200 && status !== 206)) return false
  // The body last: asking for it turns every answer into a stream, which costs each request
  // that is not a state a copy of its body through one.
  return isStatePath(surface, c) && c.res.body !== null
}

function isStatePath(surface: Surface, c: Context): boolean {
  const { path } = c.req
  switch (surface) {
    case 'v1':
      return path.startsWith('/v1/units/') && path.endsWith('/download')
    case 'http_backend':
      return true
    case 'tfe':
      return /\/state-versions\/[^/]+\/download$/.test(path)
    case 's3':
      return !path.endsWith('.tflock') && c.res.headers.get('content-type') !== 'application/xml'
    default:
      return false
  }
}

/** Counts the response's body bytes as the client is sent them. */
function countBody(c: Context, count: (bytes: number) => void): void {
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      count(chunk.byteLength)
      controller.enqueue(chunk)
    },
  })
  const { body } = c.res
  if (body !== null) c.res = new Response(body.pipeThrough(counter), c.res)
}
