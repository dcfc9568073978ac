import { describe, expect, it } from 'vitest'
import {
  CLIENT_ENCRYPTED,
  StateScanner,
  type InstanceDetail,
  type ScanOptions,
} from '@cairn/state-scan'
import { buildIndex, buildIndexBytes } from './index-builder'
import { compareInstances } from '../diff/index-diff'
import { MAX_INDEXED_INSTANCES, type ResourceIndex } from './resource-index'

function scan(text: string, chunk: number, options: ScanOptions = { index: true }) {
  const scanner = new StateScanner(options)
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += chunk) scanner.write(bytes.subarray(at, at + chunk))
  return scanner.end()
}

function indexOf(text: string, chunk = 7): ResourceIndex {
  const index = buildIndex(scan(text, chunk))
  if (index === undefined || 'none' in index) throw new Error(`no index: ${JSON.stringify(index)}`)
  return sortedByAddress(index)
}

/** The index with its instances by address (an index keeps the state's order). */
function sortedByAddress(index: ResourceIndex): ResourceIndex {
  return { ...index, resources: [...index.resources].sort(compareInstances) }
}

const NULL = 'provider["registry.terraform.io/hashicorp/null"]'
const AWS = 'module.net.provider["registry.terraform.io/hashicorp/aws"].eu'

/** A state as Terraform writes it (format 4), pretty-printed, with every kind of instance. */
const state = JSON.stringify(
  {
    version: 4,
    terraform_version: '1.11.4',
    serial: 7,
    lineage: 'c0ffee',
    outputs: {
      plain: { value: 'x', type: 'string' },
      secret: { value: 'hunter2', type: 'string', sensitive: true },
    },
    resources: [
      {
        mode: 'managed',
        type: 'null_resource',
        name: 'one',
        provider: NULL,
        instances: [{ schema_version: 0, attributes: { id: '111', triggers: null } }],
      },
      {
        mode: 'managed',
        type: 'null_resource',
        name: 'counted',
        each: 'list',
        provider: NULL,
        instances: [
          { index_key: 0, schema_version: 0, attributes: { id: 'c0' } },
          { index_key: 1, schema_version: 0, attributes: { id: 'c1' } },
        ],
      },
      {
        module: 'module.net',
        mode: 'managed',
        type: 'aws_subnet',
        name: 'private',
        each: 'map',
        provider: AWS,
        instances: [
          {
            index_key: 'a "quoted" key',
            schema_version: 1,
            attributes: {
              arn: 'arn:aws:ec2:eu-west-1:1:subnet/subnet-1',
              id: 'subnet-1',
              tags: { Name: 'a' },
              name: { nested: 'not a string' },
            },
            sensitive_attributes: [],
          },
        ],
      },
      {
        module: 'module.net',
        mode: 'data',
        type: 'aws_ami',
        name: 'base',
        provider: AWS,
        instances: [{ schema_version: 0, attributes: { id: 'ami-1', name: 'base-image' } }],
      },
      {
        mode: 'managed',
        type: 'aws_db_instance',
        name: 'main',
        provider: AWS,
        instances: [
          {
            schema_version: 2,
            attributes: { id: 'db-1', name: 'secret-name', password: 'pw' },
            sensitive_attributes: [
              [{ type: 'get_attr', value: 'password' }],
              [{ type: 'get_attr', value: 'name' }],
            ],
          },
          {
            deposed: 'abcd1234',
            schema_version: 2,
            attributes: { id: 'db-0', name: 'old' },
            sensitive_attributes: 'not paths',
          },
        ],
      },
    ],
    check_results: null,
  },
  null,
  2,
)

describe('the resource index of a scanned state', () => {
  it('lists every instance by address, with its identity, modules and providers', () => {
    const index = indexOf(state)
    expect(index.resources.map((r) => r.address)).toEqual([
      'aws_db_instance.main',
      'aws_db_instance.main (deposed abcd1234)',
      'module.net.aws_subnet.private["a \\"quoted\\" key"]',
      'module.net.data.aws_ami.base',
      'null_resource.counted[0]',
      'null_resource.counted[1]',
      'null_resource.one',
    ])
    const subnet = index.resources[2]
    expect(subnet).toMatchObject({
      module: 'module.net',
      mode: 'managed',
      type: 'aws_subnet',
      name: 'private',
      index_key: 'a "quoted" key',
      provider: AWS,
      identity: { arn: 'arn:aws:ec2:eu-west-1:1:subnet/subnet-1', id: 'subnet-1' },
    })
    expect(index.resources[3]).toMatchObject({
      mode: 'data',
      identity: { id: 'ami-1', name: 'base-image' },
    })
    expect(index.resources[4]?.index_key).toBe(0)
    expect(index.modules).toEqual(['module.net'])
    expect(index.providers).toEqual([
      'registry.terraform.io/hashicorp/aws',
      'registry.terraform.io/hashicorp/null',
    ])
    expect(index).toMatchObject({ format: 1, state_version: 4, terraform_version: '1.11.4' })
    expect(index.truncated).toBe(false)
  })

  it('keeps no identity value that sensitive_attributes covers, nor any when it is unreadable', () => {
    const index = indexOf(state)
    expect(index.resources[0]?.identity).toEqual({ id: 'db-1' })
    expect(index.resources[1]?.identity).toEqual({})
    expect(index.resources[1]?.deposed).toBe('abcd1234')
    expect(JSON.stringify(index)).not.toContain('secret-name')
    expect(JSON.stringify(index)).not.toContain('hunter2')
  })

  it('lists the outputs with their sensitivity and digests, never their values', () => {
    const index = indexOf(state)
    expect(index.outputs.map(({ name, sensitive }) => ({ name, sensitive }))).toEqual([
      { name: 'plain', sensitive: false },
      { name: 'secret', sensitive: true },
    ])
  })

  it('stores keys and identity values as JSON.stringify writes them, however the state wrote them', () => {
    // Escapes where none are needed (in values, keys and a resource's fields), numbers in other
    // forms, a name given twice, quotes in a module address, a resource whose name is no string:
    // what the index stores reads back the same and is written canonically.
    const text = `{"version": 4, "serial": 1, "lineage": "l", "resources": [
      {"module": "module.m[\\"k\\"]", "mode": "managed", "type": "t", "name": "n", "provider": ${JSON.stringify(NULL)},
       "instances": [
        {"index_key": "\\u0041b", "attributes": {"id": "i\\u002d1", "name": "x", "name": "y"}},
        {"index_key": 1.0, "attributes": {"id": "plain", "arn": "a\\/b"}},
        {"index_key": 2e1, "attributes": {"id": "é"}},
        {"index_key": "q\\"k", "attributes": {"url": ""}},
        {"index_key": "plain", "deposed": "d1", "attributes": {}}
      ]},
      {"module": "module.m[\\u0022k\\u0022]", "mode": "data", "type": "\\u0074", "name": "n2",
       "provider": "provider[\\u0022registry.terraform.io/hashicorp/null\\u0022]",
       "instances": [{"attributes": {"id": "d"}}]},
      {"module": "module.m[\\"k\\"]", "mode": "managed", "type": "t", "name": "n3",
       "provider": "provider[\\u0022registry.terraform.io/hashicorp/null\\u0022]",
       "instances": [{"attributes": {"id": "e"}}]},
      {"mode": "managed", "type": "t", "name": 5, "instances": [{"attributes": {"id": "f"}}]}
    ]}`
    for (const chunk of [1, 3, 1 << 20]) {
      const built = buildIndexBytes(scan(text, chunk))
      if (built === undefined || 'none' in built) throw new Error('no index')
      const stored = built.bytes.toString('utf8')
      expect(stored).toBe(JSON.stringify(JSON.parse(stored)))
      const index = JSON.parse(stored) as ResourceIndex
      expect(index.resources.map((r) => [r.address, r.index_key, r.identity])).toEqual([
        ['module.m["k"].t.n["Ab"]', 'Ab', { id: 'i-1', name: 'y' }],
        ['module.m["k"].t.n[1]', 1, { arn: 'a/b', id: 'plain' }],
        ['module.m["k"].t.n[20]', 20, { id: 'é' }],
        ['module.m["k"].t.n["q\\"k"]', 'q"k', {}],
        ['module.m["k"].t.n["plain"] (deposed d1)', 'plain', {}],
        ['module.m["k"].data.t.n2', undefined, { id: 'd' }],
        ['module.m["k"].t.n3', undefined, { id: 'e' }],
      ])
      // A resource's fields, however escaped, and the same provider read twice.
      expect(index.resources.slice(-2).map((r) => [r.module, r.mode, r.type, r.provider])).toEqual([
        ['module.m["k"]', 'data', 't', NULL],
        ['module.m["k"]', 'managed', 't', NULL],
      ])
    }
  })

  it('is the same whatever the chunks the body arrives in', () => {
    const whole = indexOf(state, 1 << 20)
    for (const chunk of [1, 2, 3, 5, 64]) expect(indexOf(state, chunk)).toEqual(whole)
  })

  it('keeps what it read when the caller reuses one buffer for every chunk', () => {
    const bytes = Buffer.from(state)
    for (const size of [5, 64, 4096]) {
      const scanner = new StateScanner({ index: true })
      const reused = Buffer.alloc(size)
      for (let at = 0; at < bytes.length; at += size) {
        const length = bytes.copy(reused, 0, at, at + size)
        scanner.write(reused.subarray(0, length))
      }
      const index = buildIndex(scanner.end())
      expect(index !== undefined && !('none' in index) && sortedByAddress(index)).toEqual(
        indexOf(state),
      )
    }
  })

  it('gives equal digests to equal attributes and different ones to changed attributes', () => {
    const before = indexOf(state)
    const after = indexOf(state.replace('"Name": "a"', '"Name": "b"'))
    const digests = (index: ResourceIndex) => index.resources.map((r) => r.digest)
    const changed = digests(before).map((digest, at) => digest !== digests(after)[at])
    expect(changed).toEqual([false, false, true, false, false, false, false])
  })

  it('says why a body that is no readable Terraform state has no index', () => {
    const none = (text: string) => buildIndex(scan(text, 5))
    expect(none('{"a": [1, 2]}')).toEqual({
      none: 'the body is not a Terraform state (it has no version, serial and lineage)',
    })
    expect(
      none(
        '{"serial": 1, "lineage": "l", "meta": {}, "encrypted_data": "AAAA", "encryption_version": "v0"}',
      ),
    ).toEqual({ none: CLIENT_ENCRYPTED })
    expect(none('{"version": 4, "serial": 1, "lineage": "l", "encrypted_data": "AAAA"}')).toEqual({
      none: 'the state is encrypted',
    })
    expect(none('{"version": 3, "serial": 1, "lineage": "l", "modules": []}')).toEqual({
      none: 'state format 3 is not indexed (format 4 is)',
    })
    expect(buildIndex(scan(state, 5, {}))).toBeUndefined()
  })

  it("lists every instance of a state whose index fills many blocks, in the state's order", () => {
    const count = 20_000
    const names = Array.from({ length: count }, (_, n) => `item-${n}-${'é'.repeat(n % 7)}`)
    const large = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'l',
      resources: [
        {
          mode: 'managed',
          type: 'terraform_data',
          name: 'many',
          provider: NULL,
          instances: names.map((name) => ({
            index_key: name,
            attributes: { id: `id-${name}`, input: { value: name } },
            sensitive_attributes: [],
          })),
        },
      ],
    })
    const index = buildIndex(scan(large, 65536))
    if (index === undefined || 'none' in index) throw new Error('no index')
    expect(index.resources.map((r) => [r.address, r.identity['id']])).toEqual(
      names.map((name) => [`terraform_data.many[${JSON.stringify(name)}]`, `id-${name}`]),
    )
  })

  it('indexes an instance whose attributes are far larger than any capture', () => {
    const big = 'x'.repeat(3 * 1024 * 1024)
    const text = state.replace('"triggers": null', `"triggers": {"blob": "${big}"}`)
    const index = indexOf(text, 65536)
    expect(index.resources.find((r) => r.address === 'null_resource.one')?.identity).toEqual({
      id: '111',
    })
  })

  it('hands the raw attributes of the wanted instances to a detailed diff', () => {
    const details: InstanceDetail[] = []
    scan(state, 3, {
      detail: {
        wanted: (address) => address.startsWith('aws_db_instance.main'),
        onDetail: (detail) => details.push(detail),
      },
    })
    expect(details.map((d) => d.address)).toEqual([
      'aws_db_instance.main',
      'aws_db_instance.main (deposed abcd1234)',
    ])
    expect(JSON.parse(details[0]?.attributes as string)).toEqual({
      id: 'db-1',
      name: 'secret-name',
      password: 'pw',
    })
    expect(JSON.parse(details[0]?.sensitive as string)).toHaveLength(2)
  })
})

interface RandomInstance {
  schema_version: number
  attributes: Record<string, unknown> | null
  index_key?: unknown
  deposed?: string
  sensitive_attributes?: unknown
}

interface RandomResource {
  module?: string
  mode: string
  type?: string
  name: string
  provider: string
  instances: RandomInstance[]
}

describe('the index the byte loop writes', () => {
  /** A state of random resources: plain ones, and every kind the byte loop leaves to the script. */
  function randomState(seed: number): string {
    let state = seed
    const random = (n: number) => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0
      return (state >>> 8) % n
    }
    const pick = <T>(choices: readonly T[]): T => choices[random(choices.length)] as T
    const names = ['a', 'b_1', 'é', 'with "quotes"', 'back\\slash', 'tab\t', '/slash', '']
    const identityNames = ['id', 'arn', 'name', 'self_link', 'other', 'ID']
    const value = (): unknown =>
      pick([pick(names), random(1000), null, true, { nested: pick(names) }, [1, pick(names)]])
    const resources = Array.from({ length: 1 + random(12) }, () => {
      const instances = Array.from({ length: random(5) }, (_, k) => {
        const attributes: Record<string, unknown> = { other: value() }
        for (let n = random(4); n > 0; n -= 1) attributes[pick(identityNames)] = value()
        const instance: RandomInstance = {
          schema_version: 0,
          attributes: random(10) === 0 ? null : attributes,
        }
        const key = random(6)
        if (key === 1) instance.index_key = k
        else if (key === 2) instance.index_key = pick(names)
        else if (key === 3) instance.index_key = pick([1.5, -1, 1e21, 10])
        else if (key === 4) instance.index_key = { odd: true }
        if (random(8) === 0) instance.deposed = pick(['00000001', 'a"b'])
        const sensitive = random(6)
        if (sensitive === 1) instance.sensitive_attributes = []
        else if (sensitive === 2) {
          instance.sensitive_attributes = [[{ type: 'get_attr', value: pick(identityNames) }]]
        } else if (sensitive === 3) {
          instance.sensitive_attributes = [
            [
              { value: pick(identityNames), type: 'get_attr' },
              { type: 'index', value: { value: 0, type: 'number' } },
            ],
            [{ type: 'get_attr', value: pick(identityNames) }],
          ]
        } else if (sensitive === 4) {
          instance.sensitive_attributes = pick([[[{ type: 'index', value: 1 }]], [[]], [5], 'x'])
        } else if (sensitive === 5) {
          instance.sensitive_attributes = [[{ type: 'get_attr', value: 'i\\u0064' }]]
        }
        return instance
      })
      const resource: RandomResource = {
        mode: pick(['managed', 'managed', 'data', 'other']),
        type: pick(['t', 'aws_x', 'with "q"', 'é']),
        name: pick(names.slice(0, 6)),
        provider: pick([NULL, AWS, 'provider["a\\\\b"]']),
        instances,
      }
      if (random(3) === 0) resource.module = pick(['module.a', 'module.b["k"]', 'module.c[0]', ''])
      if (random(20) === 0) delete resource.type
      return resource
    })
    const document = { version: 4, serial: 1, lineage: 'l', resources }
    return random(2) === 0 ? JSON.stringify(document) : JSON.stringify(document, null, 2)
  }

  function entriesOf(text: string, chunk: number, options: ScanOptions): string {
    const scanned = scan(text, chunk, options).resources
    if (scanned === undefined || 'none' in scanned) throw new Error('no index')
    return `${scanned.count} ${Buffer.concat(scanned.resources).toString('utf8')} ${scanned.modules.join()} ${scanned.providers.join()} ${scanned.truncated}`
  }

  it('keeps what the script keeps of keys given twice', () => {
    // JSON.parse keeps a key's last value; the index keeps the last it can use.
    const text = `{"version":4,"serial":1,"lineage":"l","resources":[
      {"mode":"managed","type":"t","type":{"x":1},"name":"n","name":"m","provider":"p",
       "instances":[
         {"index_key":1,"index_key":null,"attributes":{"id":"a","id":"b"}},
         {"index_key":"k","index_key":2,"deposed":"d","deposed":5,"attributes":{"id":"c"}},
         {"sensitive_attributes":[[{"type":"get_attr","value":"id"}]],"sensitive_attributes":[],
          "attributes":{"id":"e"},"attributes":{"arn":"f"}}]},
      {"mode":"data","type":"u","name":"v","module":"module.x","module":7,"instances":[
         {"index_key":"a","attributes":{"name":"g"}}]}]}`
    const expected = entriesOf(text, text.length, { index: true, indexInScript: true })
    expect(expected).toContain('"address":"t.m[1]"')
    for (const chunk of [text.length, 7]) {
      expect(entriesOf(text, chunk, { index: true })).toBe(expected)
    }
  })

  it('is the index the script writes, for states of every kind and any chunks', () => {
    for (let seed = 1; seed <= 400; seed += 1) {
      const text = randomState(seed)
      const expected = entriesOf(text, text.length, { index: true, indexInScript: true })
      for (const chunk of [text.length, 1 + (seed % 97), 4096]) {
        expect(entriesOf(text, chunk, { index: true }), `seed ${seed}, chunks of ${chunk}`).toBe(
          expected,
        )
      }
    }
  }, 60_000)
})

describe('the entries the byte loop writes without stopping', () => {
  /** The index as the byte loop and as the script write it, for chunks of `chunk` bytes. */
  function bothWays(text: string, chunk: number) {
    const entries = (options: ScanOptions) => {
      const scanned = scan(text, chunk, options).resources
      if (scanned === undefined || 'none' in scanned) throw new Error('no index')
      const joined = Buffer.concat(scanned.resources).toString('utf8')
      return { ...scanned, resources: joined }
    }
    return { loop: entries({ index: true }), script: entries({ index: true, indexInScript: true }) }
  }

  /** Plain resources, `count` of them, with the modules and instances `shape` gives each. */
  function manyResources(
    count: number,
    shape: (n: number) => { module: string; instances: number },
  ) {
    const resources = Array.from({ length: count }, (_, n) => {
      const { module, instances } = shape(n)
      return {
        ...(module === '' ? {} : { module }),
        mode: 'managed',
        type: 'aws_instance',
        name: `r${n}`,
        provider: n % 3 === 0 ? AWS : NULL,
        instances: Array.from({ length: instances }, (_, k) => ({
          index_key: k,
          attributes: { id: `i-${n}-${k}`, arn: `arn:aws:ec2:::instance/i-${n}-${k}` },
        })),
      }
    })
    return JSON.stringify({ version: 4, serial: 1, lineage: 'l', resources }, null, 2)
  }

  it('writes what the script writes past its room for entries and its table of modules', () => {
    // 700 modules with two providers make more pairs than the loop's table keeps; one resource
    // has more entries than its room holds at once, and the rest fill that room many times.
    const shape = (n: number) => ({
      module: n % 5 === 0 ? '' : `module.m${n % 700}`,
      instances: n === 2000 ? 3000 : 1 + (n % 3),
    })
    const text = manyResources(4000, shape)
    let instances = 0
    const modules = new Set<string>()
    for (let n = 0; n < 4000; n += 1) {
      instances += shape(n).instances
      if (shape(n).module !== '') modules.add(shape(n).module)
    }
    expect(modules.size).toBeGreaterThan(512)
    for (const chunk of [text.length, 65_543]) {
      const { loop, script } = bothWays(text, chunk)
      expect(loop.count).toBe(instances)
      expect(loop.modules).toHaveLength(modules.size)
      expect(loop).toEqual(script)
    }
  })

  it('stops at the index limit where the script stops, over many resources', () => {
    const text = manyResources(2600, (n) => ({ module: `module.m${n % 50}`, instances: 100 }))
    const { loop, script } = bothWays(text, 1 << 20)
    expect(loop.count).toBe(MAX_INDEXED_INSTANCES)
    expect(loop.truncated).toBe(true)
    expect(loop).toEqual(script)
  }, 60_000)
})

describe('an index of more instances than it keeps', () => {
  it(`keeps the first ${MAX_INDEXED_INSTANCES} and says it is truncated`, () => {
    const instances = Array.from({ length: MAX_INDEXED_INSTANCES + 1 }, (_, k) => ({
      index_key: k,
      attributes: { id: `i${k}` },
    }))
    const text = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'l',
      resources: [{ mode: 'managed', type: 't', name: 'n', provider: NULL, instances }],
    })
    const scanned = scan(text, 1 << 20).resources
    if (scanned === undefined || 'none' in scanned) throw new Error('no index')
    expect(scanned.count).toBe(MAX_INDEXED_INSTANCES)
    expect(scanned.truncated).toBe(true)
    const last = Buffer.concat(scanned.resources).toString('utf8').slice(-120)
    expect(last).toContain(`"index_key":${MAX_INDEXED_INSTANCES - 1},`)
  }, 60_000)
  it('keeps the first of one resource with more instances than the byte loop has records for, and says it is truncated', () => {
    // 270,000 passes the byte loop's 262,144 records of one resource, not only the index's limit.
    const instances = Array.from({ length: 270_000 }, (_, k) => ({
      index_key: k,
      attributes: { id: `i${k}` },
    }))
    const text = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'l',
      resources: [{ mode: 'managed', type: 't', name: 'n', provider: NULL, instances }],
    })
    const scanned = scan(text, 1 << 20).resources
    if (scanned === undefined || 'none' in scanned) throw new Error('no index')
    expect(scanned.count).toBe(MAX_INDEXED_INSTANCES)
    expect(scanned.truncated).toBe(true)
    const first = Buffer.concat(scanned.resources).toString('utf8').slice(0, 200)
    expect(first).toContain('"address":"t.n[0]"')
  }, 120_000)
})
