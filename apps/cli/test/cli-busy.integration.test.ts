import { connect, type Socket } from 'node:net'
import { useServer, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

/** A connection of the test's own, held open: it is all one address may have of this server. */
function hold(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

describe('cairn against a server too busy to take it', () => {
  // One connection per address: while the test holds one, the server answers the CLI's with 503
  // `server_busy` and `Retry-After: 1`, before it reads anything of the request.
  const server = useServer({ auth: true, args: ['-max-connections-per-address', '1'] })
  let user: CliUser
  beforeAll(async () => {
    user = await CliUser.create()
    const login = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: `${server.token}\n`,
    })
    expect(login.code, login.stderr).toBe(0)
  })
  afterAll(async () => {
    await user.dispose()
  })

  it('sends the request again after the wait the server asks for, and then succeeds', async () => {
    const held = await hold(server.port)
    const began = performance.now()
    const logged = server.output().length
    const run = user.run(['unit', 'ls', '--json'])
    // Freed once the server has turned the CLI away (it logs that it did), and so before the CLI's
    // retry is due (Retry-After: 1); a timer could fire before a slow CLI has even connected.
    await waitFor('the server to refuse the CLI its connection', () =>
      server.output().slice(logged).includes('its address is at its limit of open connections'),
    )
    held.destroy()
    const result = await run
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ units: [] })
    expect(performance.now() - began).toBeGreaterThanOrEqual(1_000)
  })

  it('says the server is busy once its retries are spent', async () => {
    const held = await hold(server.port)
    try {
      const result = await user.run(['unit', 'ls'])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain('the server has as many connections open as it allows')
    } finally {
      held.destroy()
    }
  })
})
