import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import type { AppEnv } from './app-env'
import { Later, streamJson } from './json-stream'

/** An app answering `value` with `streamJson`, and what it logged as errors. */
function appOf(value: () => unknown) {
  const errors: unknown[] = []
  const app = new Hono<AppEnv>()
  app.use(async (c, next) => {
    c.set('log', {
      error: (...args: unknown[]) => errors.push(args),
    } as unknown as AppEnv['Variables']['log'])
    await next()
  })
  app.get('/', (c) => streamJson(c, value()))
  return { app, errors }
}

describe('streamJson', () => {
  it('writes iterables as arrays, functions as what they answer and a Later as its fields in place', async () => {
    async function* items() {
      yield [1, 2]
      await Promise.resolve()
      yield [3]
    }
    const { app } = appOf(() => ({
      a: 'x',
      list: items(),
      skipped: undefined,
      later: () => Promise.resolve({ done: true }),
      rest: new Later(() => ({ b: null, c: [1] })),
    }))
    const answer = await app.request('/')
    expect(answer.headers.get('content-type')).toBe('application/json')
    expect(JSON.parse(await answer.text())).toEqual({
      a: 'x',
      list: [1, 2, 3],
      later: { done: true },
      b: null,
      c: [1],
    })
  })

  it('closes what it reads when its client goes, and logs no failure', async () => {
    let closed = false
    async function* endless() {
      try {
        for (let n = 0; ; n += 1) {
          await Promise.resolve()
          yield [`item ${n} `.repeat(100)]
        }
      } finally {
        closed = true
      }
    }
    const { app, errors } = appOf(() => ({ items: endless() }))
    const answer = await app.request('/')
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader()
    await reader.read()
    await reader.cancel()
    expect(closed).toBe(true)
    expect(errors).toEqual([])
  })
})
