import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { CairnApiError } from './errors'
import { LONGEST_BUSY_WAIT_MS, Transport } from './transport'

const BUSY = { error: 'server_busy', message: 'the server has as many uploads as it allows' }

/** A transport whose fetch gives `answers` in turn, noting each request and each wait. */
function scripted(answers: (() => Response)[], busyRetries?: number) {
  const sent: { method: string; body: string | undefined }[] = []
  const waits: number[] = []
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const body = init?.body
    let text: string | undefined
    if (typeof body === 'string') text = body
    else if (body instanceof ReadableStream) text = await new Response(body).text()
    sent.push({ method: init?.method ?? 'GET', body: text })
    const answer = answers[sent.length - 1]
    if (answer === undefined) throw new Error(`no answer for request ${sent.length}`)
    return answer()
  }
  const transport = new Transport({
    baseUrl: 'http://cairn.test',
    fetch,
    ...(busyRetries === undefined ? {} : { busyRetries }),
    sleep: (ms) => {
      waits.push(ms)
      return Promise.resolve()
    },
  })
  return { transport, sent, waits }
}

const busy = (retryAfter?: string) => () =>
  Response.json(BUSY, {
    status: 503,
    headers: retryAfter === undefined ? {} : { 'Retry-After': retryAfter },
  })
const ok = () => Response.json({ done: true })

describe('a request the server is too busy to take', () => {
  it('is sent again after the Retry-After it asked for, body and all, until it is taken', async () => {
    const { transport, sent, waits } = scripted([busy('2'), busy(), ok])
    const answer = await transport.json('PUT', '/v1/units/a/state', v.unknown(), {
      body: { bytes: '{"serial":1}' },
    })
    expect(answer).toEqual({ done: true })
    expect(sent).toEqual([
      { method: 'PUT', body: '{"serial":1}' },
      { method: 'PUT', body: '{"serial":1}' },
      { method: 'PUT', body: '{"serial":1}' },
    ])
    // Retry-After, plus up to a fifth; 1 s when the answer names no wait.
    expect(waits).toHaveLength(2)
    expect(waits[0]).toBeGreaterThanOrEqual(2_000)
    expect(waits[0]).toBeLessThanOrEqual(2_400)
    expect(waits[1]).toBeGreaterThanOrEqual(1_000)
    expect(waits[1]).toBeLessThanOrEqual(1_200)
  })

  it('fails with server_busy once its retries are spent', async () => {
    const { transport, sent } = scripted([busy('1'), busy('1'), busy('1')], 2)
    const error = await transport.send('GET', '/v1/units').catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(CairnApiError)
    expect(error).toMatchObject({ status: 503, code: 'server_busy' })
    expect(sent).toHaveLength(3)
  })

  it('is not sent again with no retries, a stream body, or a wait past the longest', async () => {
    const none = scripted([busy('1')], 0)
    await expect(none.transport.send('GET', '/v1/units')).rejects.toMatchObject({
      code: 'server_busy',
    })
    expect(none.sent).toHaveLength(1)

    const stream = scripted([busy('1'), ok])
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{}'))
        controller.close()
      },
    })
    await expect(
      stream.transport.send('PUT', '/v1/units/a/state', { body: { stream: body } }),
    ).rejects.toMatchObject({ code: 'server_busy' })
    expect(stream.sent).toHaveLength(1)

    const long = scripted([busy(String(LONGEST_BUSY_WAIT_MS / 1000 + 1)), ok])
    await expect(long.transport.send('GET', '/v1/units')).rejects.toMatchObject({
      code: 'server_busy',
    })
    expect(long.sent).toHaveLength(1)
  })

  it('leaves every other 503 to the caller, its body intact', async () => {
    const unavailable = { error: 'storage_unavailable', message: 'the store did not answer' }
    const { transport, sent, waits } = scripted([
      () => Response.json(unavailable, { status: 503, headers: { 'Retry-After': '1' } }),
    ])
    const response = await transport.request('POST', '/v1/units/a/lock')
    expect(response.status).toBe(503)
    expect(await response.json()).toEqual(unavailable)
    expect(sent).toHaveLength(1)
    expect(waits).toEqual([])
  })
})
