import { beforeAnswer } from '@cairn/core'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { createLogger } from '../log/logger'
import { createServerMetrics } from '../metrics/server-metrics'
import type { AppEnv } from './app-env'
import { requestContext } from './request-context'

/** An app of one route that answers 200 after handing `work` to `beforeAnswer`; its log lines. */
function appWith(work: () => Promise<void>) {
  const lines: string[] = []
  const app = new Hono<AppEnv>()
  const answerError = (error: Error) => Response.json({ error: error.message }, { status: 500 })
  app.use(
    requestContext(
      createLogger('info', (line) => lines.push(line)),
      { smallBodyTimeoutMs: 1000 },
      createServerMetrics(),
      answerError,
    ),
  )
  app.post('/v1/units/team/a/upload', async (c) => {
    await beforeAnswer(work())
    return c.json({ written: true })
  })
  return { app, lines }
}

const statusLogged = (lines: string[]) =>
  lines
    .map((line) => JSON.parse(line) as { msg: string; status?: number })
    .find((entry) => entry.msg === 'request')?.status

describe('a request whose answer waits for work', () => {
  it('is answered once the work is done', async () => {
    let done = false
    const { app, lines } = appWith(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      done = true
    })
    const answer = await app.request('/v1/units/team/a/upload', { method: 'POST' })
    expect(done).toBe(true)
    expect(answer.status).toBe(200)
    expect(statusLogged(lines)).toBe(200)
  })

  it('is answered with the error of the work that failed, and logged with that status', async () => {
    const { app, lines } = appWith(() => Promise.reject(new Error('the change log is not written')))
    const answer = await app.request('/v1/units/team/a/upload', { method: 'POST' })
    expect(answer.status).toBe(500)
    expect(await answer.json()).toEqual({ error: 'the change log is not written' })
    expect(statusLogged(lines)).toBe(500)
  })
})
