import { describe, expect, it } from 'vitest'
import { InvalidRequestError } from '@cairn/core'
import type { SearchHit } from '@cairn/contract'
import { SearchIndex, type SearchQuery } from './search-index'
import { indexOf, instance, syntheticIndex } from './search-test-fixtures'
import { buildPostings } from './unit-postings'

const all = (): boolean => true

function sample(): SearchIndex {
  const index = new SearchIndex()
  index.put(
    'prod/net',
    'v1',
    indexOf([
      instance('aws_vpc.main', 'aws_vpc', { id: 'vpc-1', arn: 'arn:aws:ec2:vpc/vpc-1' }),
      instance('aws_subnet.a', 'aws_subnet', { id: 'subnet-a' }),
      instance('aws_subnet.b', 'aws_subnet', { id: 'subnet-b', name: 'aws_vpc.main' }),
      instance('aws_vpc.main_peer', 'aws_vpc', { id: 'vpc-2' }),
    ]),
  )
  index.put(
    'prod/app',
    'v7',
    indexOf([
      instance('aws_instance.web[0]', 'aws_instance', { id: 'i-1', name: 'web' }),
      instance('aws_instance.web[1]', 'aws_instance', { id: 'i-2', name: 'web' }),
      instance('module.db.aws_db_instance.main', 'aws_db_instance', { id: 'db-1', name: 'vpc-1' }),
    ]),
  )
  index.put('staging/app', 'v2', indexOf([instance('aws_vpc', 'aws_vpc', { id: 'x' })]))
  index.put('prod/legacy', 'v3', { none: 'not a Terraform state' })
  index.put('staging/odd', 'v1', { none: 'not JSON' })
  return index
}

async function search(index: SearchIndex, query: Partial<SearchQuery>) {
  return index.search({ limit: 100, canRead: all, ...query })
}

const brief = (hits: SearchHit[]) => hits.map((hit) => `${hit.unit} ${hit.address} ${hit.match}`)

describe('SearchIndex', () => {
  it('finds an instance by exact address, address prefix, type and identity value', async () => {
    const index = sample()
    expect(brief((await search(index, { q: 'aws_instance.web' })).results)).toEqual([
      'prod/app aws_instance.web[0] address',
      'prod/app aws_instance.web[1] address',
    ])
    expect((await search(index, { q: 'i-2' })).results).toEqual([
      {
        unit: 'prod/app',
        address: 'aws_instance.web[1]',
        type: 'aws_instance',
        version: 'v7',
        match: 'id',
        value: 'i-2',
      },
    ])
    expect(brief((await search(index, { q: 'aws_subnet' })).results)).toEqual([
      'prod/net aws_subnet.a type',
      'prod/net aws_subnet.b type',
    ])
  })

  it('finds by long address prefixes, whatever their length', async () => {
    const index = new SearchIndex()
    const address = 'module.platform["eu-west-1"].module.network.aws_subnet.private["eu-west-1a"]'
    index.put('a', 'v1', indexOf([instance(address, 'aws_subnet')]))
    for (let length = 1; length <= address.length; length += 1) {
      const page = await search(index, { q: address.slice(0, length) })
      expect(page.results.map((hit) => hit.address)).toEqual([address])
    }
    expect((await search(index, { q: `${address.slice(0, 40)}x` })).results).toEqual([])
  })

  it('gives one hit per instance, the strongest match first: address, identity, type, prefix', async () => {
    const index = sample()
    // aws_vpc.main: exact address; aws_subnet.b: name; aws_vpc.main_peer: prefix.
    expect(brief((await search(index, { q: 'aws_vpc.main' })).results)).toEqual([
      'prod/net aws_subnet.b name',
      'prod/net aws_vpc.main address',
      'prod/net aws_vpc.main_peer address',
    ])
    // staging/app's aws_vpc is both the exact address and of type aws_vpc: address wins; the
    // type matches the others.
    expect(brief((await search(index, { q: 'aws_vpc' })).results)).toEqual([
      'prod/net aws_vpc.main type',
      'prod/net aws_vpc.main_peer type',
      'staging/app aws_vpc address',
    ])
    // An identity value held by one instance as id and by another as name.
    expect((await search(index, { q: 'vpc-1' })).results.map((hit) => hit.match)).toEqual([
      'name',
      'id',
    ])
  })

  it('keeps one type with type=, and lists every instance of it when q is absent', async () => {
    const index = sample()
    expect(brief((await search(index, { q: 'web', type: 'aws_instance' })).results)).toEqual([
      'prod/app aws_instance.web[0] name',
      'prod/app aws_instance.web[1] name',
    ])
    expect((await search(index, { q: 'vpc-1', type: 'aws_vpc' })).results).toHaveLength(1)
    expect(brief((await search(index, { type: 'aws_vpc' })).results)).toEqual([
      'prod/net aws_vpc.main type',
      'prod/net aws_vpc.main_peer type',
      'staging/app aws_vpc type',
    ])
    expect((await search(index, { type: 'aws_nothing' })).results).toEqual([])
  })

  it('keeps the units under a prefix', async () => {
    const index = sample()
    const page = await search(index, { type: 'aws_vpc', unitPrefix: 'staging/' })
    expect(brief(page.results)).toEqual(['staging/app aws_vpc type'])
    expect(page.notIndexed).toEqual([{ unit: 'staging/odd', reason: 'not JSON' }])
    expect(page.notIndexedCount).toBe(1)
  })

  it('refuses a search with neither q nor type, and a cursor it did not give', async () => {
    const index = sample()
    await expect(search(index, {})).rejects.toBeInstanceOf(InvalidRequestError)
    await expect(search(index, { q: 'x', cursor: 'bm90IG91cnM' })).rejects.toBeInstanceOf(
      InvalidRequestError,
    )
  })

  it('pages through every hit with cursors, without duplicates or gaps', async () => {
    const index = new SearchIndex()
    for (let u = 0; u < 30; u += 1)
      index.put(`u${String(u).padStart(2, '0')}`, 'v', syntheticIndex(u, 37))
    const everything = await search(index, { type: 'aws_instance', limit: 10_000 })
    expect(everything.nextCursor).toBeNull()
    for (const limit of [1, 7, 5, 100]) {
      const seen: string[] = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = await search(index, { type: 'aws_instance', limit, cursor })
        expect(page.results.length).toBeLessThanOrEqual(limit)
        seen.push(...page.results.map((hit) => `${hit.unit} ${hit.address}`))
        cursor = page.nextCursor ?? undefined
        pages += 1
      } while (cursor !== undefined)
      expect(seen).toEqual(everything.results.map((hit) => `${hit.unit} ${hit.address}`))
      expect(pages).toBe(Math.ceil(everything.results.length / limit))
    }
  })

  it('pages through an address a state holds twice (an object and its deposed one)', async () => {
    const index = new SearchIndex()
    const deposed = {
      ...instance('aws_instance.web', 'aws_instance', { id: 'i-old' }),
      deposed: 'd1',
    }
    index.put(
      'a',
      'v1',
      indexOf([
        instance('aws_instance.api', 'aws_instance', { id: 'i-api' }),
        instance('aws_instance.web', 'aws_instance', { id: 'i-new' }),
        deposed,
        instance('aws_instance.zzz', 'aws_instance', { id: 'i-z' }),
      ]),
    )
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await search(index, { type: 'aws_instance', limit: 1, cursor })
      seen.push(...page.results.map((hit) => hit.address))
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    expect(seen).toEqual([
      'aws_instance.api',
      'aws_instance.web',
      'aws_instance.web',
      'aws_instance.zzz',
    ])
  })

  it('asks canRead only of units with hits or not indexed, once each, and drops the unreadable', async () => {
    const index = sample()
    for (let u = 0; u < 50; u += 1) index.put(`other/${u}`, 'v', syntheticIndex(u, 5))
    const asked: string[] = []
    const page = await index.search({
      q: 'web',
      limit: 100,
      canRead: (unit) => {
        asked.push(unit)
        return Promise.resolve(unit !== 'staging/odd')
      },
    })
    expect(asked.sort()).toEqual(['prod/app', 'prod/legacy', 'staging/odd'])
    expect(page.results).toHaveLength(2)
    expect(page.notIndexed).toEqual([{ unit: 'prod/legacy', reason: 'not a Terraform state' }])
    expect(page.notIndexedCount).toBe(1)

    const hidden = await index.search({
      q: 'web',
      limit: 100,
      canRead: (unit) => unit !== 'prod/app',
    })
    expect(hidden.results).toEqual([])
  })

  it('names at most 100 units not indexed, sorted, and counts them all', async () => {
    const index = new SearchIndex()
    for (let u = 0; u < 150; u += 1) index.put(`u${String(u).padStart(3, '0')}`, 'v', { none: 'r' })
    const page = await search(index, { q: 'x' })
    expect(page.notIndexed).toHaveLength(100)
    expect(page.notIndexed[0]?.unit).toBe('u000')
    expect(page.notIndexed[99]?.unit).toBe('u099')
    expect(page.notIndexedCount).toBe(150)
  })

  it('says which units in scope it searched in part only, their index stopped at its limit', async () => {
    const index = sample()
    const cut = {
      ...indexOf([instance('aws_vpc.big', 'aws_vpc', { id: 'vpc-9' })]),
      truncated: true,
    }
    index.put('prod/huge', 'v1', cut)
    index.put('staging/huge', 'v1', { postings: buildPostings(cut) })
    const page = await search(index, { q: 'aws_vpc', unitPrefix: 'prod/' })
    expect(page.truncated).toEqual(['prod/huge'])
    expect(page.truncatedCount).toBe(1)
    const everywhere = await search(index, { q: 'nothing-matches' })
    expect(everywhere.truncated).toEqual(['prod/huge', 'staging/huge'])
    const unreadable = await index.search({
      q: 'aws_vpc',
      limit: 100,
      canRead: (unit) => unit !== 'prod/huge',
    })
    expect(unreadable.truncated).toEqual(['staging/huge'])
    index.put('prod/huge', 'v2', indexOf([instance('aws_vpc.big', 'aws_vpc', { id: 'vpc-9' })]))
    expect((await search(index, { q: 'x', unitPrefix: 'prod/' })).truncatedCount).toBe(0)
  })

  it('replaces a unit on put, forgets it on remove, and counts what it holds', async () => {
    const index = sample()
    expect(index.stats()).toEqual({ units: 5, instances: 8 })
    index.put(
      'prod/app',
      'v8',
      indexOf([instance('aws_instance.api', 'aws_instance', { id: 'i-9' })]),
    )
    expect(index.version('prod/app')).toBe('v8')
    expect((await search(index, { q: 'i-1' })).results).toEqual([])
    expect(brief((await search(index, { q: 'i-9' })).results)).toEqual([
      'prod/app aws_instance.api id',
    ])
    index.put('prod/net', 'v2', { none: 'not JSON' })
    index.remove('staging/app')
    expect(index.stats()).toEqual({ units: 4, instances: 1 })
    expect((await search(index, { type: 'aws_vpc' })).results).toEqual([])
    expect((await search(index, { q: 'x' })).notIndexedCount).toBe(3)
    expect([...index.units()].sort()).toEqual([
      'prod/app',
      'prod/legacy',
      'prod/net',
      'staging/odd',
    ])
  })

  it('searches postings made elsewhere (another thread) as it searches indexes it was given', async () => {
    // Units whose types and attribute names the unit numbers in other orders than the index does.
    const units = [
      indexOf([
        instance('aws_vpc.main', 'aws_vpc', { name: 'shared', id: 'vpc-1' }),
        instance('aws_subnet.a', 'aws_subnet', { id: 'subnet-a', arn: 'arn:a' }),
      ]),
      indexOf([
        instance('aws_subnet.b', 'aws_subnet', { arn: 'arn:b', name: 'shared' }),
        instance('aws_iam_role.r', 'aws_iam_role', { id: 'role', name: 'shared' }),
        instance('aws_vpc.other', 'aws_vpc', { id: 'vpc-2' }),
      ]),
      syntheticIndex(3, 40),
    ]
    const given = new SearchIndex()
    const made = new SearchIndex()
    units.forEach((unit, at) => {
      given.put(`u${at}`, 'v1', unit)
      // As a worker thread hands them over: a structured clone.
      made.put(`u${at}`, 'v1', { postings: structuredClone(buildPostings(unit)) })
    })
    const queries: Partial<SearchQuery>[] = [
      { q: 'shared' },
      { q: 'aws_subnet' },
      { type: 'aws_vpc' },
      { q: 'arn:b' },
      { q: 'aws_' },
      { q: 'aws_subnet', type: 'aws_subnet' },
      { q: 'module.' },
      { type: 'aws_iam_role', limit: 1 },
    ]
    for (const query of queries) {
      expect(await search(made, query)).toEqual(await search(given, query))
    }
    expect((await search(made, { q: 'shared' })).results.map((hit) => hit.match)).toEqual([
      'name',
      'name',
      'name',
    ])
  })
})
