import { parseUnitId, type ObjectStore } from '@cairn/core'
import { describe, expect, it } from 'vitest'
import {
  alice,
  BASE_URL,
  base64,
  JSON_API,
  LINEAGE,
  md5,
  setup,
  stateText,
  TFE_TIMESTAMP,
  type Harness,
  type OutputSpec,
} from '../../test/harness'
import { outputId, parseOutputId } from '../ids'

const WS = 'ws-app-prod'

const OUTPUTS: Record<string, OutputSpec> = {
  greeting: { value: 'héllo', type: 'string' },
  obj: {
    value: { a: 1, b: ['x', 'y'] },
    type: ['object', { a: 'number', b: ['tuple', ['string', 'string']] }],
  },
  secret: { value: 's3cr3t', type: 'string', sensitive: true },
}

/** Workspace app-prod, locked by alice, as Terraform leaves it before it writes state. */
async function lockedWorkspace(): Promise<Harness> {
  const h = setup()
  await h.workspace('app-prod')
  expect((await h.lock(WS)).status).toBe(200)
  return h
}

/** The unit and version in the ID of the current output `name`, to build other output IDs from. */
const outputIdOf = async (h: Harness, name: string) => {
  const list = await h.api('GET', `/workspaces/${WS}/current-state-version-outputs`)
  const found = list.many().find((output) => output.attributes.name === name)
  const parsed = parseOutputId(found?.id ?? '')
  if (parsed === undefined) throw new Error(`no output ${name} in ${list.text}`)
  return parsed
}

const attributesOf = async (h: Harness, path: string) => {
  const answer = await h.api('GET', path)
  expect(answer.status, answer.text).toBe(200)
  return answer.one().attributes
}

describe('state versions: the two-step upload', () => {
  it('creates a pending state version with absolute URLs for both uploads', async () => {
    const h = await lockedWorkspace()
    const state = stateText(1, { outputs: OUTPUTS })
    const answer = await h.createStateVersion(WS, state)
    expect(answer.status).toBe(201)
    expect(answer.headers.get('content-type')).toBe(JSON_API)
    const data = answer.one()
    expect(data.type).toBe('state-versions')
    expect(data.id).toMatch(/^[^/\s]+$/)
    expect(data.attributes).toMatchObject({ status: 'pending', serial: 1, md5: md5(state) })
    expect(data.attributes['created-at']).toMatch(TFE_TIMESTAMP)
    for (const key of ['hosted-state-upload-url', 'hosted-json-state-upload-url']) {
      expect(data.attributes[key]).toEqual(expect.stringMatching(/^https:\/\/cairn\.test\/\S+$/))
    }
    expect((await h.unit('app-prod')).version_count).toBe(0)
  })

  it('runs the calls of a first terraform apply: lock, create, both PUTs without a token, read, unlock', async () => {
    const h = await lockedWorkspace()
    expect((await h.api('GET', `/workspaces/${WS}/current-state-version`)).status).toBe(404)
    const state = stateText(1, { outputs: OUTPUTS })
    const created = await h.createStateVersion(WS, state)
    const { id, attributes } = created.one()
    const [json, bytes] = await Promise.all([
      h.upload(String(attributes['hosted-json-state-upload-url']), '{"format_version":"1.0"}'),
      h.upload(String(attributes['hosted-state-upload-url']), state),
    ])
    expect(json.status).toBe(200)
    expect(bytes.status).toBe(200)
    const read = await attributesOf(h, `/state-versions/${id}`)
    expect(read).toMatchObject({ status: 'finalized', serial: 1, md5: md5(state) })
    expect(read.md5).toMatch(/^[0-9a-f]{32}$/)
    expect(read['hosted-state-download-url']).toEqual(
      expect.stringMatching(/^https:\/\/cairn\.test\/\S+$/),
    )
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    const unit = await h.unit('app-prod')
    expect(unit).toMatchObject({ serial: 1, version_count: 1, locked: false })
  })

  it('serves the upload as the current state version, whose download URL gives the exact bytes', async () => {
    const h = await lockedWorkspace()
    const state = stateText(1, { outputs: OUTPUTS })
    await h.push(WS, state)
    const current = await h.api('GET', `/workspaces/${WS}/current-state-version`)
    expect(current.status).toBe(200)
    expect(current.one().type).toBe('state-versions')
    expect(current.one().attributes).toMatchObject({
      status: 'finalized',
      serial: 1,
      lineage: LINEAGE,
      md5: md5(state),
    })
    const url = String(current.one().attributes['hosted-state-download-url'])
    expect(url.startsWith(`${BASE_URL}/`)).toBe(true)
    const download = await h.request('GET', new URL(url).pathname)
    expect(download.status).toBe(200)
    expect(download.headers.get('content-type')).toMatch(/^application\/json/)
    expect(Buffer.from(download.bytes).equals(Buffer.from(state))).toBe(true)
  })

  it('reads a state version by the ID its create returned, and downloads it from there too', async () => {
    const h = await lockedWorkspace()
    const state = stateText(1)
    const id = await h.push(WS, state)
    const read = await attributesOf(h, `/state-versions/${id}`)
    const download = await h.request(
      'GET',
      new URL(String(read['hosted-state-download-url'])).pathname,
    )
    expect(download.text).toBe(state)
  })

  it('refuses a download without a token', async () => {
    const h = await lockedWorkspace()
    await h.push(WS, stateText(1))
    const url = String(
      (await attributesOf(h, `/workspaces/${WS}/current-state-version`))[
        'hosted-state-download-url'
      ],
    )
    expect((await h.request('GET', new URL(url).pathname, { token: null })).status).toBe(401)
  })

  it('accepts anything PUT to the JSON upload URL', async () => {
    const h = await lockedWorkspace()
    const created = await h.createStateVersion(WS, stateText(1))
    const url = String(created.one().attributes['hosted-json-state-upload-url'])
    expect((await h.upload(url, 'not even json')).status).toBe(200)
  })

  it('refuses a JSON state larger than the limit with 413', async () => {
    const h = await lockedWorkspace()
    const created = await h.createStateVersion(WS, stateText(1))
    const url = String(created.one().attributes['hosted-json-state-upload-url'])
    expect((await h.upload(url, 'x'.repeat(1_000_001))).status).toBe(413)
  })

  it('accepts a second state version with serial + 1', async () => {
    const h = await lockedWorkspace()
    await h.push(WS, stateText(1))
    const second = stateText(2, { outputs: { greeting: { value: 'again', type: 'string' } } })
    await h.push(WS, second)
    expect(await h.unit('app-prod')).toMatchObject({ serial: 2, version_count: 2 })
    const current = await attributesOf(h, `/workspaces/${WS}/current-state-version`)
    expect(current).toMatchObject({ serial: 2, md5: md5(second) })
  })

  it('lists the versions of a workspace newest first', async () => {
    const h = await lockedWorkspace()
    for (const serial of [1, 2, 3]) {
      h.clock.advance(1000)
      await h.push(WS, stateText(serial))
    }
    const answer = await h.api(
      'GET',
      '/state-versions?filter%5Bworkspace%5D%5Bname%5D=app-prod&filter%5Borganization%5D%5Bname%5D=acme',
    )
    expect(answer.status).toBe(200)
    const versions = answer.many()
    expect(versions.map((version) => version.attributes.serial)).toEqual([3, 2, 1])
    for (const version of versions) {
      expect(version.type).toBe('state-versions')
      expect(version.attributes.status).toBe('finalized')
    }
    expect(answer.doc().meta?.pagination).toMatchObject({ 'current-page': 1, 'total-count': 3 })
  })

  it('pages the list of versions with page[size] and page[number]', async () => {
    const h = await lockedWorkspace()
    for (const serial of [1, 2, 3]) await h.push(WS, stateText(serial))
    const page = (number: number) =>
      h.api(
        'GET',
        `/state-versions?filter[workspace][name]=app-prod&page[size]=2&page[number]=${number}`,
      )
    const [first, second] = await Promise.all([page(1), page(2)])
    expect(first.many().map((version) => version.attributes.serial)).toEqual([3, 2])
    expect(second.many().map((version) => version.attributes.serial)).toEqual([1])
    expect(first.doc().meta?.pagination).toMatchObject({
      'next-page': 2,
      'total-pages': 2,
      'total-count': 3,
    })
    expect(second.doc().meta?.pagination).toMatchObject({ 'current-page': 2, 'next-page': null })
  })

  it('refuses a list of versions without filter[workspace][name] with 422', async () => {
    const h = await lockedWorkspace()
    expect((await h.api('GET', '/state-versions')).status).toBe(422)
  })

  it('answers the download of a state version not uploaded yet with 404', async () => {
    const h = await lockedWorkspace()
    const created = await h.createStateVersion(WS, stateText(1))
    const answer = await h.api('GET', `/state-versions/${created.one().id}/download`)
    expect(answer.status).toBe(404)
    expect(created.one().attributes['hosted-state-download-url']).toBeNull()
  })

  it('answers current-state-version with 404 while the workspace has no state', async () => {
    const h = await lockedWorkspace()
    const answer = await h.api('GET', `/workspaces/${WS}/current-state-version`)
    expect(answer.status).toBe(404)
    expect(answer.error().status).toBe('404')
  })

  it('answers a state version create for a workspace that does not exist with 404', async () => {
    const h = setup()
    expect((await h.createStateVersion('ws-missing', stateText(1))).status).toBe(404)
  })
})

describe('state version outputs', () => {
  it('lists the current outputs with name, sensitive, detailed-type, and null for a sensitive value', async () => {
    const h = await lockedWorkspace()
    await h.push(WS, stateText(1, { outputs: OUTPUTS }))
    const answer = await h.api('GET', `/workspaces/${WS}/current-state-version-outputs`)
    expect(answer.status).toBe(200)
    const named = (name: string) =>
      answer.many().find((output) => output.attributes.name === name)?.attributes
    expect(answer.many().map((output) => output.attributes.name)).toEqual(
      expect.arrayContaining(['greeting', 'obj', 'secret']),
    )
    expect(answer.many()).toHaveLength(3)
    for (const output of answer.many()) {
      expect(output.type).toBe('state-version-outputs')
      expect(output.id).toMatch(/^[^/\s]+$/)
      expect(typeof output.attributes.sensitive).toBe('boolean')
    }
    expect(named('greeting')).toMatchObject({
      sensitive: false,
      value: 'héllo',
      'detailed-type': 'string',
    })
    expect(named('obj')).toMatchObject({
      sensitive: false,
      value: { a: 1, b: ['x', 'y'] },
      'detailed-type': ['object', { a: 'number', b: ['tuple', ['string', 'string']] }],
    })
    expect(named('secret')).toMatchObject({
      sensitive: true,
      value: null,
      'detailed-type': 'string',
    })
  })

  it('reveals a sensitive value when the output is read by its ID', async () => {
    const h = await lockedWorkspace()
    await h.push(WS, stateText(1, { outputs: OUTPUTS }))
    const list = await h.api('GET', `/workspaces/${WS}/current-state-version-outputs`)
    const secret = list.many().find((output) => output.attributes.name === 'secret')
    const answer = await h.api('GET', `/state-version-outputs/${secret?.id ?? ''}`)
    expect(answer.status).toBe(200)
    expect(answer.one()).toMatchObject({
      type: 'state-version-outputs',
      attributes: { name: 'secret', sensitive: true, value: 's3cr3t' },
    })
  })

  it('lists the outputs of a given state version', async () => {
    const h = await lockedWorkspace()
    const id = await h.push(WS, stateText(1, { outputs: OUTPUTS }))
    await h.push(WS, stateText(2))
    const answer = await h.api('GET', `/state-versions/${id}/outputs`)
    expect(
      answer
        .many()
        .map((output) => output.attributes.name)
        .sort(),
    ).toEqual(['greeting', 'obj', 'secret'])
  })

  it('answers current-state-version-outputs with 404 while the workspace has no state', async () => {
    const h = await lockedWorkspace()
    expect((await h.api('GET', `/workspaces/${WS}/current-state-version-outputs`)).status).toBe(404)
  })

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty'])(
    'answers 404 for an output named %s that the state does not have, and 200 for a real one',
    async (name) => {
      const h = await lockedWorkspace()
      await h.push(WS, stateText(1, { outputs: OUTPUTS }))
      const { unit, timestamp } = await outputIdOf(h, 'greeting')
      const missing = await h.api(
        'GET',
        `/state-version-outputs/${outputId(unit, timestamp, name)}`,
      )
      expect(missing.status, missing.text).toBe(404)
      const real = await h.api(
        'GET',
        `/state-version-outputs/${outputId(unit, timestamp, 'greeting')}`,
      )
      expect(real.status).toBe(200)
      expect(real.one().attributes).toMatchObject({ name: 'greeting', value: 'héllo' })
    },
  )

  it('serves an output the state really names __proto__ as that output, and nothing else through it', async () => {
    const h = await lockedWorkspace()
    // JSON.stringify writes an own `__proto__` key, as a state from Terraform would have it.
    const outputs = Object.fromEntries([
      ['__proto__', { value: 'proto-value', type: 'string' }],
      ...Object.entries(OUTPUTS),
    ]) as Record<string, OutputSpec>
    await h.push(WS, stateText(1, { outputs }))
    const list = await h.api('GET', `/workspaces/${WS}/current-state-version-outputs`)
    expect(list.many().map((output) => output.attributes.name)).toEqual(
      expect.arrayContaining(['__proto__', 'greeting', 'obj', 'secret']),
    )
    expect(list.many()).toHaveLength(4)
    const { unit, timestamp } = await outputIdOf(h, '__proto__')
    const read = await h.api(
      'GET',
      `/state-version-outputs/${outputId(unit, timestamp, '__proto__')}`,
    )
    expect(read.status).toBe(200)
    expect(read.one().attributes).toMatchObject({ name: '__proto__', value: 'proto-value' })
    // Fields of the `__proto__` output are no outputs of their own.
    for (const name of ['value', 'type', 'sensitive']) {
      const answer = await h.api('GET', `/state-version-outputs/${outputId(unit, timestamp, name)}`)
      expect(answer.status, name).toBe(404)
    }
    expect(({} as Record<string, unknown>)['value']).toBeUndefined()
  })
})

describe('the inline create form', () => {
  it('stores a state sent in attributes.state at once: 201 and finalized', async () => {
    const h = await lockedWorkspace()
    const state = stateText(1, { outputs: OUTPUTS })
    const answer = await h.createStateVersion(WS, state, { attributes: { state: base64(state) } })
    expect(answer.status).toBe(201)
    expect(answer.one().attributes).toMatchObject({
      status: 'finalized',
      serial: 1,
      md5: md5(state),
    })
    expect(await h.unit('app-prod')).toMatchObject({ serial: 1, version_count: 1 })
    const versions = await h.core.versions.list(alice, parseUnitId('app-prod'))
    expect(versions.items[0]).toMatchObject({ source: 'cloud', author: 'alice', md5: md5(state) })
  })
})

describe('a damaged pending state version record', () => {
  it('answers 503 naming the record, never a 500', async () => {
    let memory: ObjectStore | undefined
    const h = setup({
      store: (store) => {
        memory = store
        return store
      },
    })
    const id = await h.workspace('damaged')
    const created = await h.api('POST', `/workspaces/${id}/state-versions`, {
      body: {
        data: {
          type: 'state-versions',
          attributes: { serial: 1, lineage: 'l', md5: '0'.repeat(32) },
        },
      },
    })
    expect(created.status).toBe(201)
    const pending = created.one().id
    await memory?.put(`tfe/state-versions/${pending}.json`, Buffer.from('{not json'))
    const answer = await h.api('GET', `/state-versions/${pending}`)
    expect(answer.status).toBe(503)
    expect(answer.error().detail).toContain(`tfe/state-versions/${pending}.json`)
  })
})
