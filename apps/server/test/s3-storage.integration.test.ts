import { startServer, useRgw, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * The server on `-storage s3` over a real Ceph RGW, two instances over one bucket, each talking to
 * its own gateway: one lock winner across both, and what one writes the other reads byte for byte.
 */
describe('two server instances over one S3 bucket', () => {
  const rgw = useRgw({ gateways: 2 })
  const servers: RunningServer[] = []
  const state = (serial: number) =>
    `${JSON.stringify({ version: 4, terraform_version: '1.11.4', serial, lineage: 'l-s3', outputs: {}, resources: [] })}\n`

  beforeAll(async () => {
    const bucket = await rgw.createBucket()
    for (const endpoint of rgw.endpoints) {
      servers.push(
        await startServer({
          args: ['-storage', 's3'],
          env: {
            SVC_S3_BUCKET: bucket,
            SVC_S3_PREFIX: 'cairn',
            SVC_S3_ENDPOINT: endpoint,
            AWS_ACCESS_KEY_ID: rgw.accessKeyId,
            AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
            AWS_REGION: rgw.region,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
          },
        }),
      )
    }
  }, 120_000)
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.dispose()))
  })

  const call = (index: number, method: string, path: string, body?: string) =>
    fetch(`${(servers[index] as RunningServer).url}${path}`, {
      method,
      ...(body === undefined ? {} : { body }),
    })

  it('says at start which bucket it keeps units in', () => {
    expect(servers[0]?.output()).toContain('"storage":"s3"')
  })

  it('writes through one instance and reads back byte for byte through the other', async () => {
    expect((await call(0, 'POST', '/v1/units', '{"id":"team/app"}')).status).toBe(201)
    const body = state(1)
    expect((await call(0, 'POST', '/v1/units/team/app/upload', body)).status).toBe(200)
    const read = await call(1, 'GET', '/v1/units/team/app/download')
    expect(read.status).toBe(200)
    expect(await read.text()).toBe(body)
    const versions = (await (await call(1, 'GET', '/v1/units/team/app/versions')).json()) as {
      versions: { serial: number }[]
    }
    expect(versions.versions.map((version) => version.serial)).toEqual([1])
  })

  it('gives one lock to exactly one of 30 racers spread over both instances', async () => {
    expect((await call(1, 'POST', '/v1/units', '{"id":"team/race"}')).status).toBe(201)
    for (let round = 0; round < 3; round += 1) {
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          call(index % 2, 'POST', '/v1/units/team/race/lock', JSON.stringify({ Who: `r${index}` })),
        ),
      )
      const statuses = answers.map((answer) => answer.status)
      expect(statuses.filter((status) => status === 200)).toHaveLength(1)
      expect(statuses.filter((status) => status === 409)).toHaveLength(29)
      const winner = answers[statuses.indexOf(200)] as Response
      const { ID } = (await winner.json()) as { ID: string }
      const unlocked = await call(
        round % 2,
        'DELETE',
        '/v1/units/team/race/unlock',
        JSON.stringify({ ID }),
      )
      expect(unlocked.status).toBe(200)
    }
  })

  it('loses no version when both instances write the same unit one after another', async () => {
    expect((await call(0, 'POST', '/v1/units', '{"id":"team/both"}')).status).toBe(201)
    for (let serial = 1; serial <= 6; serial += 1) {
      const written = await call(serial % 2, 'POST', '/v1/units/team/both/upload', state(serial))
      expect(written.status).toBe(200)
    }
    const { versions } = (await (await call(0, 'GET', '/v1/units/team/both/versions')).json()) as {
      versions: { serial: number }[]
    }
    expect(versions.map((version) => version.serial)).toEqual([6, 5, 4, 3, 2, 1])
  })
})
