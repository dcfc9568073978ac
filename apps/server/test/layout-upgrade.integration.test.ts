import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const FIXTURE = join(import.meta.dirname, '..', '..', '..', 'packages', 'core', 'test', 'fixtures')

/**
 * The server started on a data directory written before layout 2 (core's `layout-1` fixture,
 * copied): it upgrades the directory at start and answers what the older server answered.
 */
describe('the server on a data directory of the previous layout', () => {
  let dataDir: string
  let server: RunningServer

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-layout-1-'))
    await cp(join(FIXTURE, 'layout-1'), dataDir, { recursive: true })
    server = await startServer({ dataDir })
  }, 60_000)
  afterAll(async () => {
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
  })

  const get = async (path: string): Promise<unknown> => {
    const response = await fetch(`${server.url}${path}`)
    expect(response.status).toBe(200)
    return response.json()
  }

  it('says at start that it upgraded the layout', () => {
    expect(server.output()).toContain('store layout upgraded')
    expect(server.output()).toContain('"records":4')
  })

  it('lists the units and answers their statuses as before', async () => {
    const units = (await get('/v1/units')) as { units: { id: string; locked: boolean }[] }
    expect(units.units.map((unit) => [unit.id, unit.locked])).toEqual([
      ['prod/app', false],
      ['prod/net', false],
      ['prod/web', false],
      ['solo', true],
    ])
    expect(await get('/v1/units/prod/app/status')).toMatchObject({
      status: 'red',
      edges: [{ from: 'prod/net', output: 'vpc', state: 'pending', since: { serial: 2 } }],
    })
    const status = (await get('/v1/status?prefix=prod/')) as {
      units: { id: string; status: string }[]
    }
    expect(status.units.map((unit) => unit.status)).toEqual(['red', 'green', 'yellow'])
  })

  it('leaves nothing of the old layout behind', async () => {
    expect(await readdir(dataDir)).not.toContain('graph')
    expect(await readdir(join(dataDir, 'units', 'solo!'))).not.toContain('unit.json')
  })
})
