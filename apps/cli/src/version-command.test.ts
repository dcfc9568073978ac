import { describe, expect, it, vi } from 'vitest'
import { version } from '../package.json'
import { routeRequestsThrough } from './context'
import { cairn, json, routeTo, run, TEST_SERVER, useCliHome } from './testing/in-process-cli'
import { wireStub } from './testing/wire-stub'

/**
 * `cairn --version` (and `cairn version`), as `gh --version`: the client's version, and the
 * server's from `GET /version` when a server is configured; a server that is down or older never
 * makes it fail. Against the `/version` wire contract.
 */

useCliHome('cairn-version-command-')

describe('cairn --version', () => {
  it("prints the client's version alone when no server is configured, asking nothing", async () => {
    vi.stubEnv('SVC_SERVER_URL', '')
    const sent: string[] = []
    routeRequestsThrough((input) => {
      sent.push(new Request(input).url)
      return Promise.reject(new TypeError('fetch failed'))
    })
    expect(await cairn('--version')).toBe(`cairn ${version}\n`)
    expect(sent).toEqual([])
    expect(version).toMatch(/^\d+\.\d+\.\d+/)
  })

  it("prints the server's version from GET /version beside it, without a token", async () => {
    const stub = wireStub(({ method, url }) =>
      method === 'GET' && url.pathname === '/version'
        ? { status: 200, body: { version: '1.4.2' } }
        : { status: 404, body: { error: 'not_found', message: 'no' } },
    )
    routeTo(stub, [])
    expect(await cairn('--version')).toBe(`cairn ${version}\nserver ${TEST_SERVER} 1.4.2\n`)
    expect(await cairn('version')).toBe(`cairn ${version}\nserver ${TEST_SERVER} 1.4.2\n`)
    expect(await json('--version')).toEqual({
      cairn: version,
      server: { url: TEST_SERVER, version: '1.4.2', error: null },
    })
    expect(stub.received.map(({ method, url }) => `${method} ${url.pathname}`)).toEqual(
      Array(3).fill('GET /version'),
    )
  })

  it('never fails because the server is down, and says why its version is unknown', async () => {
    routeRequestsThrough(() =>
      Promise.reject(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })),
    )
    const result = await run('--version')
    expect(result.error).toBeUndefined()
    expect(result.stdout).toBe(`cairn ${version}\n`)
    expect(result.stderr).toBe(
      `server ${TEST_SERVER}: version unknown (cannot reach ${TEST_SERVER}: ECONNREFUSED)\n`,
    )
  })

  it('says a server from before GET /version is older', async () => {
    routeTo(
      wireStub(() => ({ status: 404, body: { error: 'not_found', message: 'no route' } })),
      [],
    )
    const result = await run('--version')
    expect(result.error).toBeUndefined()
    expect(result.stderr).toBe(
      `server ${TEST_SERVER}: version unknown (the server is older than GET /version)\n`,
    )
  })
})
