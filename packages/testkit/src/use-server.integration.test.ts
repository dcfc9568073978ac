import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fetchAs } from './fetch-as'
import { isRunning } from './is-running'
import { useServer } from './use-server'

describe('useServer', () => {
  const gone: { pid: number; dataDir: string }[] = []

  describe('for a suite', () => {
    const server = useServer({ auth: true })
    let early: unknown
    try {
      early = server.url
    } catch (error) {
      early = error
    }

    it('throws when read before its server starts', () => {
      expect(String(early)).toContain('no server is running')
    })

    it('starts the server before the tests, with the admin token local mode made', async () => {
      expect((await fetchAs(server, '/v1/auth/me', server.token)).status).toBe(200)
      expect((await fetchAs(server, '/v1/auth/me', null)).status).toBe(401)
      expect(server.token).toMatch(/^svc_tfe_/)
      gone.push({ pid: server.pid, dataDir: server.dataDir })
    })

    it('keeps that server for the next test', () => {
      expect(server.pid).toBe(gone[0]?.pid)
    })
  })

  describe('for each test', () => {
    const server = useServer({}, { each: true })

    it.each([1, 2])('starts a new server for test %i, without authentication', async () => {
      expect(gone.map((one) => one.pid)).not.toContain(server.pid)
      expect((await fetch(`${server.url}/v1/units`)).status).toBe(200)
      expect(() => server.token).toThrow('made no admin token')
      gone.push({ pid: server.pid, dataDir: server.dataDir })
    })
  })

  it('stops each server after its tests and removes its data directory', () => {
    expect(gone).toHaveLength(3)
    for (const { pid, dataDir } of gone) {
      expect(isRunning(pid)).toBe(false)
      expect(existsSync(dataDir)).toBe(false)
    }
  })
})
