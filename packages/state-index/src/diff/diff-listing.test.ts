import { describe, expect, it } from 'vitest'
import type { UnitDiff } from '@cairn/contract'
import { collectDiff, diffListing, type DiffSide } from './diff-listing'
import { DiffTable, matchTables } from './diff-table'
import { compareInstances, diffIndexes, toResource } from './index-diff'
import type { IndexedInstance, ResourceIndex } from '../stored-index/resource-index'

const version = (timestamp: string) => ({
  timestamp,
  sha256: 'a'.repeat(64),
  md5: 'b'.repeat(32),
  size: 1,
  serial: 1,
  lineage: 'l',
  author: 'ann',
  source: 'api' as const,
})

function index(
  resources: IndexedInstance[],
  outputs: ResourceIndex['outputs'] = [],
): ResourceIndex {
  return {
    format: 1,
    digests: 'hash64',
    state_version: 4,
    terraform_version: '1.11.4',
    modules: [],
    providers: [],
    resources,
    outputs,
    truncated: false,
  }
}

function instance(address: string, digest: string, deposed?: string): IndexedInstance {
  return {
    address,
    module: '',
    mode: 'managed',
    type: 't',
    name: address.split('.')[1] ?? 'n',
    provider: 'provider["registry.terraform.io/hashicorp/null"]',
    digest,
    identity: { id: `${address}-${digest}` },
    ...(deposed === undefined ? {} : { deposed }),
  }
}

/** An index's stored bytes, read in small chunks each time it is opened. */
function side(of: ResourceIndex): { open: () => AsyncIterable<Uint8Array>; bytes: Buffer } {
  const { resources, ...rest } = of
  const bytes = Buffer.from(JSON.stringify({ resources, ...rest }))
  return {
    bytes,
    // eslint-disable-next-line @typescript-eslint/require-await -- the bytes are at hand
    open: async function* () {
      for (let at = 0; at < bytes.length; at += 1009) yield bytes.subarray(at, at + 1009)
    },
  }
}

async function diffOf(
  before: ResourceIndex | null,
  after: ResourceIndex,
  page: { limit?: number; cursor?: { part: 0 | 1 | 2; next: number } } = {},
) {
  const sides: { before: DiffSide | null; after: DiffSide } = {
    before: null,
    after: { table: new DiffTable(), open: side(after).open, unreadable: (error) => error },
  }
  sides.after.table = await DiffTable.read(side(after).open())
  if (before !== null) {
    const opened = side(before)
    sides.before = {
      table: await DiffTable.read(opened.open()),
      open: opened.open,
      unreadable: (error) => error,
    }
  }
  const { resources: _, ...emptyRest } = index([])
  const counts = matchTables(sides.before?.table ?? DiffTable.empty(emptyRest), sides.after.table)
  return collectDiff(
    diffListing({
      unit: 'u',
      from: before === null ? null : version('2026-01-01T00:00:00.000Z'),
      to: version('2026-01-02T00:00:00.000Z'),
      ...sides,
      counts,
      start: page.cursor ?? { part: 0, next: 0 },
      limit: page.limit,
      detail: undefined,
      signal: undefined,
    }),
  )
}

/** The diff the merge walk of whole, sorted indexes makes: the answer's sets must be these. */
function expected(before: ResourceIndex | null, after: ResourceIndex) {
  const diff = diffIndexes(before, after)
  return {
    added: diff.added.map(toResource),
    removed: diff.removed.map(toResource),
    changed: diff.changed.map(({ after: now }) => toResource(now)),
  }
}

const byAddress = (list: { address: string; deposed?: string | undefined }[]) =>
  [...list].sort((a, b) => compareInstances(a as IndexedInstance, b as IndexedInstance))

/** A random index: addresses from a small pool (so many are shared), some deposed, some repeated. */
function randomIndex(seed: number): ResourceIndex {
  let state = seed
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
  const resources: IndexedInstance[] = []
  const count = Math.floor(next() * 60)
  for (let k = 0; k < count; k += 1) {
    const address = `t.r${Math.floor(next() * 40)}`
    const deposed = next() < 0.1 ? `d${Math.floor(next() * 2)}` : undefined
    resources.push(instance(address, `${Math.floor(next() * 3)}`, deposed))
  }
  return index(resources)
}

describe('a diff read from two indexes as they stream', () => {
  it('finds what the merge walk of the sorted indexes finds, for random pairs of indexes', async () => {
    for (let seed = 1; seed <= 200; seed += 1) {
      const before = seed % 7 === 0 ? null : randomIndex(seed)
      const after = randomIndex(seed * 31 + 7)
      const diff = await diffOf(before, after)
      const want = expected(before, after)
      expect(byAddress(diff.resources.added), `seed ${seed}`).toEqual(byAddress(want.added))
      expect(byAddress(diff.resources.removed), `seed ${seed}`).toEqual(byAddress(want.removed))
      expect(byAddress(diff.resources.changed), `seed ${seed}`).toEqual(byAddress(want.changed))
      expect(diff.counts).toEqual({
        added: want.added.length,
        removed: want.removed.length,
        changed: want.changed.length,
      })
      expect(diff.next_cursor).toBeNull()
    }
  })

  it('gives the same diff page by page, each page at most the limit, every change once', async () => {
    for (let seed = 1; seed <= 12; seed += 1) {
      const before = randomIndex(seed)
      const after = randomIndex(seed + 1000)
      const whole = await diffOf(before, after)
      for (const limit of [1, 3, 7]) {
        const pages: UnitDiff[] = []
        let cursor: { part: 0 | 1 | 2; next: number } | undefined
        for (;;) {
          const page = await diffOf(before, after, {
            limit,
            ...(cursor === undefined ? {} : { cursor }),
          })
          pages.push(page)
          const size =
            page.resources.added.length +
            page.resources.removed.length +
            page.resources.changed.length
          expect(size).toBeLessThanOrEqual(limit)
          if (page.next_cursor === null || page.next_cursor === undefined) break
          const [, , , part, next] = JSON.parse(
            Buffer.from(page.next_cursor, 'base64url').toString('utf8'),
          ) as [string, string, string, 0 | 1 | 2, number]
          cursor = { part, next }
        }
        for (const list of ['added', 'removed', 'changed'] as const) {
          expect(pages.flatMap((page) => page.resources[list])).toEqual(whole.resources[list])
        }
      }
    }
  })

  it('lists the outputs that changed on the first page only', async () => {
    const output = (name: string, digest: string) => ({ name, digest, sensitive: false })
    const before = index([instance('t.a', '1')], [output('o', '1'), output('gone', '1')])
    const after = index([instance('t.a', '2')], [output('o', '2'), output('new', '1')])
    const first = await diffOf(before, after)
    expect(first.outputs).toEqual({
      added: [{ name: 'new', sensitive: false }],
      removed: [{ name: 'gone', sensitive: false }],
      changed: [{ name: 'o', sensitive: false }],
    })
    const later = await diffOf(before, after, { cursor: { part: 2, next: 0 } })
    expect(later.outputs).toEqual({ added: [], removed: [], changed: [] })
    expect(later.resources.changed.map((change) => change.address)).toEqual(['t.a'])
  })

  it('stops reading an index once the page is full', async () => {
    const many = index(Array.from({ length: 500 }, (_, k) => instance(`t.r${k}`, '1')))
    const opened = side(many)
    let read = 0
    const counted = {
      unreadable: (error: Error) => error,
      table: await DiffTable.read(opened.open()),
      open: async function* () {
        for await (const chunk of opened.open()) {
          read += chunk.length
          yield chunk
        }
      },
    }
    const { resources: _, ...rest } = index([])
    const counts = matchTables(DiffTable.empty(rest), counted.table)
    const page = await collectDiff(
      diffListing({
        unit: 'u',
        from: null,
        to: version('2026-01-02T00:00:00.000Z'),
        before: null,
        after: counted,
        counts,
        start: { part: 0, next: 0 },
        limit: 3,
        detail: undefined,
        signal: undefined,
      }),
    )
    expect(page.resources.added).toHaveLength(3)
    expect(page.next_cursor).not.toBeNull()
    expect(read).toBeLessThan(opened.bytes.length / 4)
  })
})
