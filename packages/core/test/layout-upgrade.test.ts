import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { allowAll } from '../src/access/authorizer'
import type { Principal } from '../src/access/principal'
import { createCore } from '../src/core'
import { openFsStore, type FsStore } from '../src/storage/fs-store'
import { upgradeLayout } from '../src/storage/layout-upgrade'
import { createMemoryStore } from '../src/storage/memory-store'
import { listAllKeys } from '../src/storage/object-store'
import { writeRecord } from '../src/storage/stored-json'
import { bytesOf, terraformState, textOf } from '../src/testing/fixtures'
import { ManualClock } from '../src/testing/manual-clock'
import { parseUnitId } from '../src/units/unit-id'

const alice: Principal = { subject: 'alice' }
const id = parseUnitId

/**
 * `fixtures/layout-1` is a data directory written by the server before layout 2, unchanged: four
 * units, edges in `graph/graph.json`, a lock, earlier versions. Its statuses, as that server
 * answered them, are written out below.
 */
describe('a data directory made by layout 1', () => {
  let root: string
  let store: FsStore

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'cairn-layout-'))
    await cp(join(import.meta.dirname, 'fixtures', 'layout-1'), root, { recursive: true })
    store = await openFsStore(root)
  })
  afterEach(async () => {
    await store.close()
    await rm(root, { recursive: true, force: true })
  })

  const keys = async (): Promise<string[]> => {
    const found: string[] = []
    for await (const key of listAllKeys(store, '')) found.push(key)
    return found
  }
  const core = () =>
    createCore({
      store,
      authorizer: allowAll,
      clock: new ManualClock(Date.parse('2026-02-01T00:00:00Z')),
    })

  it('is upgraded at start: records moved, edges in them, the graph object gone', async () => {
    expect(await upgradeLayout(store)).toEqual({ from: 1, to: 2, records: 4, edges: 2 })
    const after = await keys()
    expect(after.filter((key) => key.startsWith('unit-records/'))).toEqual([
      'unit-records/prod/app!.json',
      'unit-records/prod/net!.json',
      'unit-records/prod/web!.json',
      'unit-records/solo!.json',
    ])
    expect(after.filter((key) => key.endsWith('/unit.json') || key.startsWith('graph/'))).toEqual(
      [],
    )
    expect(after).toContain('layout.json')
    expect(await upgradeLayout(store)).toEqual({ from: 2, to: 2, records: 0, edges: 0 })
  })

  it('answers every unit, lock, version and status as the old server did', async () => {
    await upgradeLayout(store)
    const cairn = core()
    const listed = await cairn.units.list(alice)
    expect(listed.items.map((unit) => [unit.id, unit.tags, unit.locked])).toEqual([
      ['prod/app', [], false],
      ['prod/net', ['env:prod', 'network'], false],
      ['prod/web', [], false],
      ['solo', [], true],
    ])
    expect((await cairn.units.get(alice, id('solo'))).lock?.ID).toBe(
      '6f1c3a52-9d2b-4c1e-8a47-2b9e6f0d1c55',
    )
    const versions = await cairn.versions.list(alice, id('prod/net'))
    expect(versions.items.map((version) => version.serial)).toEqual([3, 2, 1])
    const download = await cairn.versions.download(alice, id('prod/net'))
    expect(JSON.parse(await textOf(download.body))).toMatchObject({
      serial: 3,
      outputs: { vpc: { value: 'vpc-3' } },
    })
    // What the layout-1 server answered for this directory.
    expect(await cairn.dependencies.status(alice, id('prod/app'))).toEqual({
      id: 'prod/app',
      status: 'red',
      edges: [
        {
          from: 'prod/net',
          output: 'vpc',
          state: 'pending',
          since: { timestamp: '2026-01-01T00:00:04.000Z', serial: 2 },
        },
      ],
      red_upstream: [],
    })
    expect(await cairn.dependencies.status(alice, id('prod/web'))).toEqual({
      id: 'prod/web',
      status: 'yellow',
      edges: [
        { from: 'prod/app', state: 'ok' },
        { from: 'prod/net', output: 'subnet', state: 'ok' },
      ],
      red_upstream: ['prod/app'],
    })
    const page = await cairn.dependencies.statuses(alice, { prefix: 'prod/' })
    expect(page.items.map((status) => [status.id, status.status])).toEqual([
      ['prod/app', 'red'],
      ['prod/net', 'green'],
      ['prod/web', 'yellow'],
    ])
  })

  it('goes on from there: a write acknowledges, and its consumers follow', async () => {
    await upgradeLayout(store)
    const cairn = core()
    const state = terraformState({ serial: 2, lineage: 'l', outputs: { url: 'https://app-2' } })
    await cairn.states.write(alice, id('prod/app'), bytesOf(state), { source: 'http' })
    expect((await cairn.dependencies.status(alice, id('prod/app'))).status).toBe('green')
    expect(await cairn.dependencies.status(alice, id('prod/web'))).toMatchObject({
      status: 'red',
      edges: [{ from: 'prod/app', state: 'pending' }, { state: 'ok' }],
    })
    expect((await cairn.dependencies.get(alice, id('prod/web'))).dependencies).toEqual([
      { from: 'prod/app' },
      { from: 'prod/net', output: 'subnet' },
    ])
  })

  it('takes the acknowledgements of a write whose graph step a crash cut off', async () => {
    // As layout 1 left it when it stopped between a write of prod/app and that write's graph step:
    // the version carries what it acknowledged (vpc-3), the graph still the older digest.
    const key = join(root, 'units', 'prod', 'app!', 'unit.json')
    const record = JSON.parse(await readFile(key, 'utf8')) as {
      current: { timestamp: string; acks?: unknown }
    }
    const graph = JSON.parse(await readFile(join(root, 'graph', 'graph.json'), 'utf8')) as {
      units: Record<string, { outputs: Record<string, string> }>
    }
    record.current.timestamp = '2026-01-01T00:00:09.000Z'
    record.current.acks = [
      { from: 'prod/net', output: 'vpc', digest: graph.units['prod/net']?.outputs['vpc'] },
    ]
    await writeFile(key, JSON.stringify(record))
    await upgradeLayout(store)
    expect(await core().dependencies.status(alice, id('prod/app'))).toMatchObject({
      status: 'green',
      edges: [{ from: 'prod/net', output: 'vpc', state: 'ok' }],
    })
  })

  it('is upgraded once when several instances start at the same moment', async () => {
    const results = await Promise.all([upgradeLayout(store), upgradeLayout(store)])
    expect(results.every((result) => result.to === 2)).toBe(true)
    const status = await core().dependencies.status(alice, id('prod/app'))
    expect(status.status).toBe('red')
    expect((await keys()).filter((key) => key.startsWith('unit-records/'))).toHaveLength(4)
  })
})

describe('the layout marker', () => {
  it('is written on a new store, which is in the current layout from the start', async () => {
    const store = createMemoryStore()
    expect(await upgradeLayout(store)).toEqual({ from: 2, to: 2, records: 0, edges: 0 })
    expect(await store.head('layout.json')).toBeDefined()
    expect(await upgradeLayout(store)).toEqual({ from: 2, to: 2, records: 0, edges: 0 })
  })

  it('upgrades a store without a marker that holds only the graph of layout 1', async () => {
    const store = createMemoryStore()
    await writeRecord(store, 'graph/graph.json', { units: {} })
    expect(await upgradeLayout(store)).toEqual({ from: 1, to: 2, records: 0, edges: 0 })
    expect(await store.head('graph/graph.json')).toBeUndefined()
  })

  it('refuses a store in a layout newer than this version knows', async () => {
    const store = createMemoryStore()
    await writeRecord(store, 'layout.json', { layout: 3 })
    await expect(upgradeLayout(store)).rejects.toThrow(/layout 3, newer than this version/)
  })
})
