import { PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3'
import { MAX_STATE_DEPTH } from '@cairn/state-scan'
import { useServer } from '@cairn/testkit'
import { describe, expect, it } from 'vitest'
import { issueS3Credentials, s3Client } from './support/s3'

// A state nested deeper than the limit is refused as it is written, on every surface that writes
// one, with a 400 in that surface's dialect that names the limit, and the unit keeps the state it
// had (issue 30: one 4,000 levels deep was taken, and its readers then failed). Reading a deep
// state stored before the limit is in src/nesting-limit.test.ts.

const LINEAGE = 'b7a1c2d3-0000-4000-8000-000000000030'

/**
 * A Terraform state (format 4) whose resource's attribute `input` nests the document `depth`
 * levels deep: six levels of the state's own frame, then arrays. Written as text, since
 * `JSON.stringify` overflows the stack on a value thousands of levels deep.
 */
function stateNested(serial: number, depth: number): string {
  const inner = depth - 6
  return `{"version":4,"terraform_version":"1.11.4","serial":${serial},"lineage":"${LINEAGE}","outputs":{},"resources":[{"mode":"managed","type":"terraform_data","name":"deep","provider":"provider[\\"terraform.io/builtin/terraform\\"]","instances":[{"schema_version":0,"attributes":{"id":"x","input":${'['.repeat(inner)}${']'.repeat(inner)}},"sensitive_attributes":[]}]}]}`
}

describe('the nesting limit on every surface that writes a state', () => {
  const server = useServer({ auth: true })
  const bearer = () => ({ Authorization: `Bearer ${server.token}` })

  const currentSha = async (unit: string) => {
    const reply = await fetch(`${server.url}/v1/units/${unit}`, { headers: bearer() })
    expect(reply.status).toBe(200)
    return ((await reply.json()) as { sha256: string }).sha256
  }

  /** Writes serial 1 through /v1, so a refusal can be seen to leave it current. */
  const firstVersion = async (unit: string) => {
    const created = await fetch(`${server.url}/v1/units`, {
      method: 'POST',
      headers: bearer(),
      body: JSON.stringify({ id: unit }),
    })
    expect(created.status).toBe(201)
    const uploaded = await fetch(`${server.url}/v1/units/${unit}/upload`, {
      method: 'POST',
      headers: bearer(),
      body: stateNested(1, 8),
    })
    expect(uploaded.status, await uploaded.text()).toBe(200)
    return currentSha(unit)
  }

  const refusal = expect.stringContaining(`nested deeper than ${MAX_STATE_DEPTH} levels`) as string

  it('takes a state exactly as deep as the limit through /v1', async () => {
    await firstVersion('depth/at-limit')
    const reply = await fetch(`${server.url}/v1/units/depth/at-limit/upload`, {
      method: 'POST',
      headers: bearer(),
      body: stateNested(2, MAX_STATE_DEPTH),
    })
    expect(reply.status, await reply.text()).toBe(200)
  })

  it.each([MAX_STATE_DEPTH + 1, 10_000])(
    'refuses a /v1 upload nested %i levels deep with 400 invalid_state',
    async (depth) => {
      const unit = `depth/v1-${depth}`
      const before = await firstVersion(unit)
      const reply = await fetch(`${server.url}/v1/units/${unit}/upload`, {
        method: 'POST',
        headers: bearer(),
        body: stateNested(2, depth),
      })
      expect(reply.status).toBe(400)
      expect(await reply.json()).toEqual({ error: 'invalid_state', message: refusal })
      expect(await currentSha(unit)).toBe(before)
    },
  )

  it("refuses the http backend's POST of a deep state with 400, as Terraform sends it", async () => {
    const unit = 'depth/http'
    const before = await firstVersion(unit)
    const body = stateNested(2, 4_000)
    const reply = await fetch(`${server.url}/v1/backend/${unit}`, {
      method: 'POST',
      headers: {
        // Terraform's http backend: Basic auth with the token as password, JSON with its MD5.
        Authorization: `Basic ${Buffer.from(`terraform:${server.token}`).toString('base64')}`,
        'User-Agent': 'Go-http-client/1.1',
        'Content-Type': 'application/json',
      },
      body,
    })
    expect(reply.status).toBe(400)
    expect(await reply.json()).toEqual({ error: 'invalid_state', message: refusal })
    expect(await currentSha(unit)).toBe(before)
  })

  it("refuses the AWS SDK's PutObject of a deep state with 400 InvalidArgument", async () => {
    const unit = 'depth/s3'
    const before = await firstVersion(unit)
    const s3 = s3Client(server.url, await issueS3Credentials(server.url, server.token))
    const put = s3.send(
      new PutObjectCommand({
        Bucket: 'tfstate',
        Key: `${unit}/terraform.tfstate`,
        Body: stateNested(2, 4_000),
      }),
    )
    const error: unknown = await put.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(S3ServiceException)
    const refused = error as S3ServiceException
    expect(refused.$metadata.httpStatusCode).toBe(400)
    expect(refused.name).toBe('InvalidArgument')
    expect(refused.message).toEqual(refusal)
    expect(await currentSha(unit)).toBe(before)
  })
})
