import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startStallingProxy, type StallingProxy } from './stalling-proxy'

describe('a stalling proxy', () => {
  let server: Server
  let proxy: StallingProxy
  beforeAll(async () => {
    server = createServer((req, res) => res.end(`served ${req.url ?? ''}`))
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    proxy = await startStallingProxy(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
  })
  afterAll(async () => {
    await proxy.close()
    await new Promise((done) => server.close(done))
  })

  const get = (path: string, timeoutMs = 5_000) =>
    fetch(`${proxy.endpoint}${path}`, { signal: AbortSignal.timeout(timeoutMs) }).then((answer) =>
      answer.text(),
    )

  it('passes requests on, and answers nothing while stalled, then passes on what waited', async () => {
    expect(await get('/one')).toBe('served /one')
    proxy.stall()
    await expect(get('/refused', 300)).rejects.toThrow()
    const waiting = get('/waited')
    await new Promise((done) => setTimeout(done, 200))
    proxy.resume()
    expect(await waiting).toBe('served /waited')
    expect(await get('/two')).toBe('served /two')
  })
})
