import { describe, expect, it } from 'vitest'
import { CairnApiError } from './errors'
import { answering } from './testing/answering-fetch'

const version = (timestamp: string) => ({
  timestamp,
  sha256: 'a'.repeat(64),
  md5: 'b'.repeat(32),
  size: 100,
  serial: 3,
  lineage: 'l-1',
  author: 'ann',
  source: 'api',
})

const resource = {
  address: 'aws_instance.web',
  module: '',
  mode: 'managed',
  type: 'aws_instance',
  name: 'web',
  provider: 'registry.terraform.io/hashicorp/aws',
  identity: { id: 'i-123' },
}

const FROM = '2026-11-23T11:00:00.000Z'
const TO = '2026-11-23T12:00:00.000Z'

describe('units.resources', () => {
  it('asks for the current version, or the one written at version', async () => {
    const body = {
      unit: 'team/app',
      version: version(TO),
      indexed: true,
      terraform_version: '1.9.0',
      modules: [],
      providers: ['registry.terraform.io/hashicorp/aws'],
      resources: [resource],
      outputs: [{ name: 'ip', sensitive: false }],
      truncated: false,
    }
    const { asked, client } = answering(() => ({ status: 200, body }))
    expect(await client.units.resources('team/app')).toEqual(body)
    await client.units.resources('team/app', { version: TO })
    expect(asked.map((url) => url.pathname)).toEqual([
      '/v1/units/team/app/versions/current/resources',
      `/v1/units/team/app/versions/${encodeURIComponent(TO)}/resources`,
    ])
  })

  it('answers indexed false with the reason for a state that is not Terraform', async () => {
    const body = {
      unit: 'team/raw',
      version: version(TO),
      indexed: false,
      reason: 'not a Terraform state',
    }
    const { client } = answering(() => ({ status: 200, body }))
    expect(await client.units.resources('team/raw')).toEqual(body)
  })
})

describe('units.diff', () => {
  const diff = {
    unit: 'team/app',
    from: version(FROM),
    to: version(TO),
    resources: {
      added: [resource],
      removed: [],
      changed: [
        {
          ...resource,
          address: 'aws_s3_bucket.logs',
          attributes: [{ path: 'tags.Name', before: 'a', after: 'b' }],
        },
      ],
    },
    outputs: { added: [], removed: [], changed: [] },
    truncated: false,
  }

  it('sends from, to and detail, and answers the diff', async () => {
    const { asked, client } = answering(() => ({ status: 200, body: diff }))
    expect(await client.units.diff('team/app', { from: FROM, to: TO, detail: true })).toEqual(diff)
    await client.units.diff('team/app')
    expect(asked.map((url) => Object.fromEntries(url.searchParams))).toEqual([
      { from: FROM, to: TO, detail: 'true' },
      {},
    ])
    expect(asked[0]?.pathname).toBe('/v1/units/team/app/diff')
  })

  it('throws not_indexed when a version is not a readable Terraform state', async () => {
    const { client } = answering(() => ({
      status: 422,
      body: { error: 'not_indexed', message: 'the version is not a Terraform state' },
    }))
    const refused = client.units.diff('team/raw')
    await expect(refused).rejects.toBeInstanceOf(CairnApiError)
    await expect(refused).rejects.toMatchObject({ code: 'not_indexed', status: 422 })
  })
})
