import { describe, expect, it } from 'vitest'
import { compareInstances, diffIndexes, toResource } from './index-diff'
import type { IndexedInstance, IndexedOutput, ResourceIndex } from '../stored-index/resource-index'

const AWS = 'provider["registry.terraform.io/hashicorp/aws"]'

function instance(
  address: string,
  digest: string,
  extra: Partial<IndexedInstance> = {},
): IndexedInstance {
  const bare = address.replace(/\[.*\]$/, '')
  const dot = bare.lastIndexOf('.')
  return {
    address,
    module: '',
    mode: 'managed',
    type: bare.slice(0, dot),
    name: bare.slice(dot + 1),
    provider: AWS,
    digest,
    identity: {},
    ...extra,
  }
}

function output(name: string, digest: string, sensitive = false): IndexedOutput {
  return { name, digest, sensitive }
}

function index(
  resources: IndexedInstance[],
  outputs: IndexedOutput[] = [],
  truncated = false,
): ResourceIndex {
  return {
    format: 1,
    state_version: 4,
    terraform_version: '1.11.4',
    modules: [],
    providers: [],
    resources: [...resources].sort(compareInstances),
    outputs,
    truncated,
  }
}

const addresses = (list: { address: string }[]) => list.map((entry) => entry.address)

describe('diffIndexes', () => {
  it('sorts count and for_each instances out by address: added, removed, changed', () => {
    const before = index([
      instance('aws_instance.web[0]', 'a', { index_key: 0 }),
      instance('aws_instance.web[1]', 'b', { index_key: 1 }),
      instance('aws_s3_bucket.logs["eu"]', 'c', { index_key: 'eu' }),
      instance('aws_s3_bucket.logs["us"]', 'd', { index_key: 'us' }),
      instance('aws_vpc.main', 'e'),
    ])
    const after = index([
      instance('aws_instance.web[0]', 'a', { index_key: 0 }),
      instance('aws_instance.web[1]', 'B', { index_key: 1 }),
      instance('aws_instance.web[2]', 'f', { index_key: 2 }),
      instance('aws_s3_bucket.logs["us"]', 'd', { index_key: 'us' }),
      instance('aws_vpc.main', 'e', { provider: `${AWS}.eu` }),
      instance('data.aws_ami.base', 'g', { mode: 'data' }),
    ])
    const diff = diffIndexes(before, after)
    expect(addresses(diff.added)).toEqual(['aws_instance.web[2]', 'data.aws_ami.base'])
    expect(addresses(diff.removed)).toEqual(['aws_s3_bucket.logs["eu"]'])
    expect(diff.changed.map((pair) => [pair.before.digest, pair.after.address])).toEqual([
      ['b', 'aws_instance.web[1]'],
      ['e', 'aws_vpc.main'],
    ])
    expect(diff.truncated).toBe(false)
  })

  it('tells a deposed object from the current one at the same address', () => {
    const before = index([instance('aws_db.main', 'old')])
    const after = index([
      instance('aws_db.main', 'new'),
      instance('aws_db.main', 'old', { deposed: '00000001' }),
    ])
    const diff = diffIndexes(before, after)
    expect(diff.added.map((entry) => entry.deposed)).toEqual(['00000001'])
    expect(diff.removed).toEqual([])
    expect(diff.changed.map((pair) => pair.after.digest)).toEqual(['new'])

    const settled = diffIndexes(after, index([instance('aws_db.main', 'new')]))
    expect(settled.removed.map((entry) => entry.deposed)).toEqual(['00000001'])
    expect(settled.changed).toEqual([])
  })

  it('reports everything as added when there is no earlier version', () => {
    const after = index(
      [instance('aws_vpc.main', 'e'), instance('aws_subnet.a', 'f')],
      [output('vpc_id', 'x')],
    )
    const diff = diffIndexes(null, after)
    expect(addresses(diff.added)).toEqual(['aws_subnet.a', 'aws_vpc.main'])
    expect(diff.removed).toEqual([])
    expect(diff.changed).toEqual([])
    expect(diff.outputs.added.map((entry) => entry.name)).toEqual(['vpc_id'])
  })

  it('finds nothing between a version and itself', () => {
    const same = index([instance('aws_vpc.main', 'e')], [output('id', 'x')])
    const diff = diffIndexes(same, same)
    expect([diff.added, diff.removed, diff.changed]).toEqual([[], [], []])
    expect(diff.outputs).toEqual({ added: [], removed: [], changed: [] })
  })

  it('compares outputs by name, a change of sensitivity alone being a change', () => {
    const before = index([], [output('a', '1'), output('b', '2'), output('c', '3')])
    const after = index([], [output('b', '2', true), output('c', '4'), output('d', '5')])
    const diff = diffIndexes(before, after)
    expect(diff.outputs.added.map((entry) => entry.name)).toEqual(['d'])
    expect(diff.outputs.removed.map((entry) => entry.name)).toEqual(['a'])
    expect(diff.outputs.changed.map((pair) => pair.after.name)).toEqual(['b', 'c'])
  })

  it('says truncated when either index is', () => {
    const whole = index([instance('aws_vpc.main', 'e')])
    const cut = index([instance('aws_vpc.main', 'e')], [], true)
    expect(diffIndexes(cut, whole).truncated).toBe(true)
    expect(diffIndexes(whole, cut).truncated).toBe(true)
    expect(diffIndexes(null, cut).truncated).toBe(true)
    expect(diffIndexes(whole, whole).truncated).toBe(false)
  })

  it('still pairs instances up when a list arrives out of order', () => {
    const before = index([instance('b.x', '1'), instance('a.x', '2')])
    before.resources.reverse()
    const diff = diffIndexes(before, index([instance('a.x', '2'), instance('b.x', '3')]))
    expect([diff.added, diff.removed]).toEqual([[], []])
    expect(addresses(diff.changed.map((pair) => pair.after))).toEqual(['b.x'])
  })

  it('walks 100k instances in one pass', () => {
    const many = (digest: (n: number) => string) =>
      Array.from({ length: 100_000 }, (_, n) =>
        instance(`aws_instance.web[${String(n).padStart(6, '0')}]`, digest(n)),
      )
    const diff = diffIndexes(
      index(many(() => 'a')),
      index(many((n) => (n % 1000 === 0 ? 'b' : 'a'))),
    )
    expect(diff.changed).toHaveLength(100)
  })
})

describe('toResource', () => {
  it('drops the digest and keeps the rest, absent fields absent', () => {
    const resource = toResource(
      instance('aws_vpc.main', 'secret-digest', { identity: { id: 'v' } }),
    )
    expect(resource).toEqual({
      address: 'aws_vpc.main',
      module: '',
      mode: 'managed',
      type: 'aws_vpc',
      name: 'main',
      provider: AWS,
      identity: { id: 'v' },
    })
    expect(Object.keys(resource)).not.toContain('digest')
    expect(Object.keys(resource)).not.toContain('index_key')
    const keyed = toResource(
      instance('aws_db.main["a"]', 'x', { index_key: 'a', deposed: '0000000a' }),
    )
    expect([keyed.index_key, keyed.deposed]).toEqual(['a', '0000000a'])
  })
})
