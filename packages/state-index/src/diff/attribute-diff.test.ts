import { describe, expect, it } from 'vitest'
import { InvalidStateError, parseOutputs } from '@cairn/core'
import { attributeChanges, outputChanges } from './attribute-diff'
import type { IndexDiff } from './index-diff'

const S = '(sensitive)'

/** An instance version from attribute values and, when given, sensitive paths (raw JSON both). */
function at(attributes: unknown, sensitive?: unknown) {
  return {
    attributes: JSON.stringify(attributes),
    sensitive: sensitive === undefined ? undefined : JSON.stringify(sensitive),
  }
}

const attr = (name: string) => ({ type: 'get_attr', value: name })
const key = (name: string) => ({ type: 'index', value: { value: name, type: 'string' } })
const nth = (index: number) => ({ type: 'index', value: { value: index, type: 'number' } })

describe('attributeChanges', () => {
  it('finds changes deep in nested objects, by dotted path', () => {
    const before = at({ id: 'i-1', root: { volume: { size: 8, type: 'gp2' } } })
    const after = at({ id: 'i-1', root: { volume: { size: 16, type: 'gp2' } } })
    expect(attributeChanges(before, after)).toEqual([
      { path: 'root.volume.size', before: 8, after: 16 },
    ])
  })

  it('compares lists element by element as they grow and shrink', () => {
    const short = at({ ingress: [{ from_port: 22 }, { from_port: 80 }] })
    const long = at({ ingress: [{ from_port: 22 }, { from_port: 443 }, { from_port: 8080 }] })
    expect(attributeChanges(short, long)).toEqual([
      { path: 'ingress[1].from_port', before: 80, after: 443 },
      { path: 'ingress[2]', after: { from_port: 8080 } },
    ])
    expect(attributeChanges(long, short)).toEqual([
      { path: 'ingress[1].from_port', before: 443, after: 80 },
      { path: 'ingress[2]', before: { from_port: 8080 } },
    ])
  })

  it('shows a change of type whole, and attributes new or gone with one side only', () => {
    const before = at({ a: '1', b: { x: 1 }, c: [1], gone: true, same: null })
    const after = at({ a: 1, b: 'x', c: { 0: 1 }, same: null, added: null })
    expect(attributeChanges(before, after)).toEqual([
      { path: 'a', before: '1', after: 1 },
      { path: 'added', after: null },
      { path: 'b', before: { x: 1 }, after: 'x' },
      { path: 'c', before: [1], after: { 0: 1 } },
      { path: 'gone', before: true },
    ])
  })

  it('quotes keys that are no identifiers, and treats prototype names as plain keys', () => {
    const before = at({ tags: { 'team name': 'a', '1st': 'x', 'a"b': 'q', constructor: 'c' } })
    const after = at({
      tags: { 'team name': 'b', '1st': 'y', 'a"b': 'r', constructor: 'd' },
      'web.site': 1,
      ['__proto__']: { polluted: true },
    })
    const changes = attributeChanges(before, after)
    expect(changes.map((change) => change.path)).toEqual([
      '__proto__',
      'tags["1st"]',
      'tags["a\\"b"]',
      'tags.constructor',
      'tags["team name"]',
      '["web.site"]',
    ])
    expect(changes[0]?.after).toEqual(JSON.parse('{"polluted":true}'))
    expect(Object.getPrototypeOf(changes[0]?.after)).toBe(Object.prototype)
  })

  it('finds nothing when only the order of keys differs', () => {
    expect(
      attributeChanges(at({ a: 1, b: { c: 2, d: 3 } }), at({ b: { d: 3, c: 2 }, a: 1 })),
    ).toEqual([])
  })

  it('hides a sensitive leaf and shows its neighbours', () => {
    const paths = [[attr('password')], [attr('tags'), key('k')], [attr('list'), nth(1)]]
    const before = at(
      { password: 'hunter2', tags: { k: 'old-k', j: 'j1' }, list: ['a', 'b'] },
      paths,
    )
    const after = at(
      { password: 'hunter3', tags: { k: 'new-k', j: 'j2' }, list: ['x', 'y'] },
      paths,
    )
    const changes = attributeChanges(before, after)
    expect(changes).toEqual([
      { path: 'list[0]', before: 'a', after: 'x' },
      { path: 'list[1]', before: S, after: S },
      { path: 'password', before: S, after: S },
      { path: 'tags.j', before: 'j1', after: 'j2' },
      { path: 'tags.k', before: S, after: S },
    ])
    for (const secret of ['hunter2', 'hunter3', 'old-k', 'new-k', '"b"', '"y"']) {
      expect(JSON.stringify(changes)).not.toContain(secret)
    }
  })

  it('hides a whole sensitive map as one change, without naming its keys', () => {
    const before = at({ tags: { 'secret-key': 'a', other: 'b' } }, [[attr('tags')]])
    const after = at({ tags: { 'secret-key': 'c', more: 'd' } }, [[attr('tags')]])
    const changes = attributeChanges(before, after)
    expect(changes).toEqual([{ path: 'tags', before: S, after: S }])
  })

  it('hides a value sensitive on one side only, on both sides', () => {
    const before = at({ password: 'was-secret' }, [[attr('password')]])
    const after = at({ password: 'now-plain' }, [])
    expect(attributeChanges(before, after)).toEqual([{ path: 'password', before: S, after: S }])
    expect(attributeChanges(after, before)).toEqual([{ path: 'password', before: S, after: S }])
  })

  it('hides a subtree added or gone whole when anything in it is sensitive', () => {
    const paths = [[attr('db'), attr('password')]]
    const without = at({ id: 'x' }, [])
    const withDb = at({ id: 'x', db: { user: 'admin', password: 'pw-in-subtree' } }, paths)
    expect(attributeChanges(without, withDb)).toEqual([{ path: 'db', after: S }])
    expect(attributeChanges(withDb, without)).toEqual([{ path: 'db', before: S }])
  })

  it('hides a sensitive value inside an element added to a list', () => {
    const before = at({ users: [{ name: 'a', token: 't-a' }] }, [
      [attr('users'), nth(0), attr('token')],
    ])
    const after = at(
      {
        users: [
          { name: 'a', token: 't-a' },
          { name: 'b', token: 't-bbb' },
        ],
      },
      [
        [attr('users'), nth(0), attr('token')],
        [attr('users'), nth(1), attr('token')],
      ],
    )
    const changes = attributeChanges(before, after)
    expect(changes).toEqual([{ path: 'users[1]', after: S }])
  })

  it('takes every value as sensitive when sensitive_attributes cannot be read', () => {
    for (const sensitive of ['{not json', '{"password":true}', '[[]]', '[["password"]]']) {
      const before = { attributes: '{"password":"p1","size":1,"same":2}', sensitive }
      const after = { attributes: '{"password":"p2","size":2,"same":2}', sensitive }
      expect(attributeChanges(before, after)).toEqual([
        { path: 'password', before: S, after: S },
        { path: 'size', before: S, after: S },
      ])
    }
  })

  it('takes a path as sensitive up to a step it cannot read', () => {
    const setElement = { type: 'index', value: { value: { name: 'a' }, type: ['object', {}] } }
    const paths = [[attr('rule'), setElement, attr('secret')]]
    const before = at({ rule: [{ name: 'a', secret: 's1' }], size: 1 }, paths)
    const after = at({ rule: [{ name: 'a', secret: 's2' }], size: 2 }, paths)
    expect(attributeChanges(before, after)).toEqual([
      { path: 'rule', before: S, after: S },
      { path: 'size', before: 1, after: 2 },
    ])
  })

  it('takes nothing as sensitive when sensitive_attributes is absent or null', () => {
    const before = { attributes: '{"a":"x"}', sensitive: 'null' }
    const after = { attributes: '{"a":"y"}' }
    expect(attributeChanges(before, after)).toEqual([{ path: 'a', before: 'x', after: 'y' }])
  })

  it('matches an element of a set of strings by its value', () => {
    const paths = [[attr('names'), key('secret-name')]]
    const before = at({ names: ['a', 'secret-name'] }, paths)
    const after = at({ names: ['a', 'b', 'secret-name'] }, paths)
    const changes = attributeChanges(before, after)
    expect(changes).toEqual([
      { path: 'names[1]', before: S, after: S },
      { path: 'names[2]', after: S },
    ])
  })

  it('cuts strings longer than 1024 characters, also inside an object shown whole', () => {
    const long = 'x'.repeat(1500)
    const changes = attributeChanges(
      at({ policy: 'short' }),
      at({ policy: long, doc: { body: long } }),
    )
    const cut = `${'x'.repeat(1024)}… (476 more characters)`
    expect(changes).toEqual([
      { path: 'doc', after: { body: cut } },
      { path: 'policy', before: 'short', after: cut },
    ])
  })

  it('refuses attributes that are not JSON', () => {
    expect(() => attributeChanges({ attributes: '{' }, at({}))).toThrow(InvalidStateError)
  })
})

/**
 * Two versions of a `terraform_data` instance written by Terraform 1.11.4 on this machine, from
 * `input = { password = sensitive("s3cr3t-one"), tags = { env = "dev", "team name" = "core" },
 * size = 1 }` and a sensitive output, then applied again with the values of version two.
 */
const REAL_V1 = {
  attributes: `{"id": "3cc5bed5-7a79-a46b-baf0-b307555050ea", "input": {"value": {"password": "s3cr3t-one", "size": 1, "tags": {"env": "dev", "team name": "core"}}, "type": ["object", {"password": "string", "size": "number", "tags": ["object", {"env": "string", "team name": "string"}]}]}, "output": {"value": {"password": "s3cr3t-one", "size": 1, "tags": {"env": "dev", "team name": "core"}}, "type": ["object", {"password": "string", "size": "number", "tags": ["object", {"env": "string", "team name": "string"}]}]}, "triggers_replace": null}`,
  sensitive: `[[{"type": "get_attr", "value": "input"}, {"type": "get_attr", "value": "password"}]]`,
  outputs: `{"token": {"value": "tok-one", "type": "string", "sensitive": true}}`,
}
const REAL_V2 = {
  attributes: `{"id": "3cc5bed5-7a79-a46b-baf0-b307555050ea", "input": {"value": {"password": "s3cr3t-two", "size": 2, "tags": {"Name": "web", "env": "prod", "team name": "core"}}, "type": ["object", {"password": "string", "size": "number", "tags": ["object", {"Name": "string", "env": "string", "team name": "string"}]}]}, "output": {"value": {"password": "s3cr3t-two", "size": 2, "tags": {"Name": "web", "env": "prod", "team name": "core"}}, "type": ["object", {"password": "string", "size": "number", "tags": ["object", {"Name": "string", "env": "string", "team name": "string"}]}]}, "triggers_replace": null}`,
  sensitive: `[[{"type": "get_attr", "value": "input"}, {"type": "get_attr", "value": "password"}]]`,
  outputs: `{"token": {"value": "tok-two", "type": "string", "sensitive": true}}`,
}
/** The same with `input = tomap({ k = sensitive("map-secret"), j = "plain" })`, a set marked whole. */
const REAL_MAP_V1 = {
  attributes: `{"id": "c1ab7e32-3647-14e2-cf2f-e92914fcfc21", "input": {"value": {"j": "plain", "k": "map-secret"}, "type": ["map", "string"]}, "output": {"value": {"j": "plain", "k": "map-secret"}, "type": ["map", "string"]}, "triggers_replace": {"value": ["a", "set-secret"], "type": ["set", "string"]}}`,
  sensitive: `[[{"type": "get_attr", "value": "input"}, {"type": "index", "value": {"value": "k", "type": "string"}}], [{"type": "get_attr", "value": "triggers_replace"}]]`,
}
const REAL_MAP_V2 = {
  attributes: `{"id": "c1ab7e32-3647-14e2-cf2f-e92914fcfc21", "input": {"value": {"j": "plain-2", "k": "map-secret-2"}, "type": ["map", "string"]}, "output": {"value": {"j": "plain-2", "k": "map-secret-2"}, "type": ["map", "string"]}, "triggers_replace": {"value": ["a", "set-secret"], "type": ["set", "string"]}}`,
  sensitive: `[[{"type": "get_attr", "value": "triggers_replace"}], [{"type": "get_attr", "value": "input"}, {"type": "index", "value": {"value": "k", "type": "string"}}]]`,
}

describe('a state written by the real Terraform', () => {
  it('never shows its sensitive values, not even where Terraform left them unmarked', () => {
    const changes = attributeChanges(REAL_V1, REAL_V2)
    expect(changes).toEqual([
      // The type of a dynamic value names its keys: hidden, as the value holds a secret.
      { path: 'input.type', before: S, after: S },
      { path: 'input.value.password', before: S, after: S },
      { path: 'input.value.size', before: 1, after: 2 },
      { path: 'input.value.tags.Name', after: 'web' },
      { path: 'input.value.tags.env', before: 'dev', after: 'prod' },
      { path: 'output.type[1].tags[1].Name', after: 'string' },
      // Unmarked in the state (terraform show -json agrees), hidden as a known secret.
      { path: 'output.value.password', before: S, after: S },
      { path: 'output.value.size', before: 1, after: 2 },
      { path: 'output.value.tags.Name', after: 'web' },
      { path: 'output.value.tags.env', before: 'dev', after: 'prod' },
    ])
    const text = JSON.stringify(changes)
    expect(text).not.toContain('s3cr3t')
  })

  it('hides a sensitive map member, also where it is copied unmarked', () => {
    const changes = attributeChanges(REAL_MAP_V1, REAL_MAP_V2)
    expect(changes).toEqual([
      { path: 'input.value.j', before: 'plain', after: 'plain-2' },
      { path: 'input.value.k', before: S, after: S },
      { path: 'output.value.j', before: 'plain', after: 'plain-2' },
      { path: 'output.value.k', before: S, after: S },
    ])
    expect(JSON.stringify(changes)).not.toMatch(/secret/)
  })

  it('hides its sensitive output', () => {
    const diff: IndexDiff['outputs'] = {
      added: [],
      removed: [],
      changed: [
        {
          before: { name: 'token', digest: 'a', sensitive: true },
          after: { name: 'token', digest: 'b', sensitive: true },
        },
      ],
    }
    const before = parseOutputs(new TextEncoder().encode(REAL_V1.outputs))
    const after = parseOutputs(new TextEncoder().encode(REAL_V2.outputs))
    const changes = outputChanges(diff, before, after)
    expect(changes.changed).toEqual([{ name: 'token', sensitive: true, before: S, after: S }])
    expect(JSON.stringify(changes)).not.toContain('tok-')
  })
})

describe('outputChanges', () => {
  const outputs = (json: unknown) => parseOutputs(new TextEncoder().encode(JSON.stringify(json)))
  const before = outputs({
    gone: { value: 'g', type: 'string' },
    id: { value: 'vpc-1', type: 'string' },
    key: { value: 'k1', type: 'string' },
    doc: { value: { a: 1 }, type: ['object', { a: 'number' }] },
  })
  const after = outputs({
    id: { value: 'vpc-2', type: 'string' },
    key: { value: 'k2', type: 'string', sensitive: true },
    doc: { value: { a: 'y'.repeat(1100) }, type: ['object', { a: 'string' }] },
    new: { value: 'n', type: 'string', sensitive: true },
    plain: { value: ['p'], type: ['tuple', ['string']] },
  })
  const indexed = (name: string, sensitive = false) => ({ name, digest: name, sensitive })
  const diff: IndexDiff['outputs'] = {
    added: [indexed('new', true), indexed('plain')],
    removed: [indexed('gone')],
    changed: [
      { before: indexed('doc'), after: indexed('doc') },
      { before: indexed('id'), after: indexed('id') },
      { before: indexed('key'), after: indexed('key', true) },
    ],
  }

  it('gives the values of each version, (sensitive) when sensitive in either', () => {
    expect(outputChanges(diff, before, after)).toEqual({
      added: [
        { name: 'new', sensitive: true, after: S },
        { name: 'plain', sensitive: false, after: ['p'] },
      ],
      removed: [{ name: 'gone', sensitive: false, before: 'g' }],
      changed: [
        {
          name: 'doc',
          sensitive: false,
          before: { a: 1 },
          after: { a: `${'y'.repeat(1024)}… (76 more characters)` },
        },
        { name: 'id', sensitive: false, before: 'vpc-1', after: 'vpc-2' },
        { name: 'key', sensitive: true, before: S, after: S },
      ],
    })
  })

  it('gives names and sensitivity only when the values are not read', () => {
    const changes = outputChanges(diff, null, null)
    expect(changes.changed).toEqual([
      { name: 'doc', sensitive: false },
      { name: 'id', sensitive: false },
      { name: 'key', sensitive: true },
    ])
    expect(changes.added).toEqual([
      { name: 'new', sensitive: true },
      { name: 'plain', sensitive: false },
    ])
  })

  it('hides an output the index missed as sensitive but the state marks so', () => {
    const sneaky = outputChanges(
      { added: [], removed: [], changed: [{ before: indexed('id'), after: indexed('id') }] },
      outputs({ id: { value: 'a', type: 'string', sensitive: true } }),
      outputs({ id: { value: 'b', type: 'string' } }),
    )
    expect(sneaky.changed).toEqual([{ name: 'id', sensitive: true, before: S, after: S }])
  })
})
