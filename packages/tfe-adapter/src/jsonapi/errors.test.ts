import { guardStorageFaults, type ObjectStore } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { API, JSON_API, setup } from '../../test/harness'

/** A store whose reads fail with `error` once `failing.on` is set. */
function failingReads(error: () => Error) {
  const failing = { on: false }
  const wrap = (memory: ObjectStore): ObjectStore =>
    guardStorageFaults({
      ...memory,
      get: (key) => (failing.on ? Promise.reject(error()) : memory.get(key)),
      head: (key) => (failing.on ? Promise.reject(error()) : memory.head(key)),
      put: (key, body, options) => memory.put(key, body, options),
      delete: (key, options) => memory.delete(key, options),
      list: (options) => memory.list(options),
      ping: () => memory.ping(),
    })
  return { failing, wrap }
}

describe('errors of the server itself', () => {
  it('answers a 500 and logs it once at error level, with its cause', async () => {
    const { failing, wrap } = failingReads(() => new Error('the disk is on fire'))
    const h = setup({ store: wrap })
    const id = await h.workspace('w1')
    failing.on = true
    const answer = await h.api('GET', `/workspaces/${id}`)
    expect(answer.status).toBe(500)
    expect(answer.text).not.toContain('on fire')
    const errors = h.logged.filter((line) => line.level === 'error')
    expect(errors).toHaveLength(1)
    expect((errors[0]?.fields['error'] as Error).message).toContain('on fire')
  })

  it('answers 503 with Retry-After when storage runs out of file handles', async () => {
    const { failing, wrap } = failingReads(() =>
      Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' }),
    )
    const h = setup({ store: wrap })
    const id = await h.workspace('w1')
    failing.on = true
    const answer = await h.api('GET', `/workspaces/${id}`)
    expect(answer.status).toBe(503)
    expect(answer.headers.get('retry-after')).toBe('1')
  })

  it('logs a client that went away mid-request at info, without a stack', async () => {
    const { failing, wrap } = failingReads(() =>
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
    )
    const h = setup({ store: wrap })
    const id = await h.workspace('w1')
    failing.on = true
    await h.api('GET', `/workspaces/${id}`)
    expect(h.logged.filter((line) => line.level === 'error')).toEqual([])
    expect(
      h.logged.some(
        (line) => line.level === 'info' && line.message.includes('closed the connection'),
      ),
    ).toBe(true)
  })
})

describe('request documents', () => {
  it('refuses a chunked document over the limit with 413, without reading it all', async () => {
    const h = setup()
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1
        if (pulled > 10_000) controller.close()
        else controller.enqueue(new Uint8Array(64 * 1024).fill(0x20))
      },
    })
    const answer = await h.app.request(`${API}/organizations/acme/workspaces`, {
      method: 'POST',
      headers: { Authorization: 'Bearer good', 'Content-Type': JSON_API },
      body,
      duplex: 'half',
    })
    expect(answer.status).toBe(413)
    expect(await answer.json()).toMatchObject({ errors: [{ status: '413' }] })
    // 1 MiB is 16 chunks of 64 KiB: the reader stopped there, not at 625 MiB.
    expect(pulled).toBeLessThan(40)
  })
})
