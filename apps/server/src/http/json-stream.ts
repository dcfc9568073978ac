import { isClientAbort } from '@cairn/core'
import type { Context } from 'hono'
import type { AppEnv } from './app-env'

/**
 * Fields written where this stands, from an object known only once what comes before it has been
 * written (a listing's tail, once its resources are through).
 */
export class Later {
  readonly fields: () => object | Promise<object>

  constructor(fields: () => object | Promise<object>) {
    this.fields = fields
  }
}

/** About how much is written at a time: large enough for few writes, small enough to hold. */
const FLUSH_BYTES = 64 * 1024

/**
 * Answers `value` as JSON written as it is read, so a large answer is never one string: an
 * `AsyncIterable` of batches is written as an array, one batch at a time; a function as what it
 * answers (awaited), once what comes before it is written; a `Later` as its fields, in place;
 * anything else as `JSON.stringify` writes it. The client reading slowly slows the reading down
 * (it pulls), and a client that goes away stops it: the iterables are closed.
 *
 * A failure after the first byte cannot change the status: it is logged and the connection cut,
 * so the client sees an incomplete answer rather than a wrong one.
 */
export function streamJson(c: Context<AppEnv>, value: unknown, status: 200 = 200): Response {
  const encoder = new TextEncoder()
  const pieces = write(value)
  let pending = ''
  /** Set once the client has gone: what the read still hands over is dropped. */
  let cancelled = false
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        for (;;) {
          const next = await pieces.next()
          if (cancelled) return
          if (next.done === true) {
            if (pending !== '') controller.enqueue(encoder.encode(pending))
            pending = ''
            controller.close()
            return
          }
          pending += next.value
          if (pending.length >= FLUSH_BYTES) {
            controller.enqueue(encoder.encode(pending))
            pending = ''
            return
          }
        }
      } catch (error) {
        if (cancelled) return
        if (!isClientAbort(error)) c.var.log.error('an answer failed as it was written', { error })
        throw error
      }
    },
    async cancel() {
      cancelled = true
      pending = ''
      await pieces.return(undefined)
    },
  })
  return c.body(stream, status, { 'Content-Type': 'application/json' })
}

async function* write(value: unknown): AsyncGenerator<string> {
  if (typeof value === 'function') {
    yield* write(await (value as () => unknown)())
    return
  }
  if (value !== null && typeof value === 'object') {
    if (Symbol.asyncIterator in value) {
      yield '['
      let first = true
      for await (const batch of value as AsyncIterable<readonly unknown[]>) {
        for (const item of batch) {
          yield first ? JSON.stringify(item) : `,${JSON.stringify(item)}`
          first = false
        }
      }
      yield ']'
      return
    }
    if (!Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype) {
      yield '{'
      yield* fields(value, true)
      yield '}'
      return
    }
  }
  // Fields that are undefined are left out before this; an item of a list is null, as in JSON.
  yield value === undefined ? 'null' : JSON.stringify(value)
}

/** An object's fields, without braces; answers whether none has been written yet. */
async function* fields(object: object, first: boolean): AsyncGenerator<string, boolean> {
  let none = first
  for (const [key, field] of Object.entries(object)) {
    if (field === undefined) continue
    if (field instanceof Later) {
      none = yield* fields(await field.fields(), none)
      continue
    }
    yield `${none ? '' : ','}${JSON.stringify(key)}:`
    none = false
    yield* write(field)
  }
  return none
}
