import { generateKeyPairSync } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  readAdminToken,
  s3BackendBlock,
  startCiIssuer,
  startServer,
  TerraformWorkspace,
  useRgw,
  type CiIssuer,
  type RunningServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/**
 * Trust policies with three instances over one Ceph RGW bucket: a policy set on one applies on the
 * others at once, a token exchanged on one works on all, and its S3 credentials let real
 * Terraform's `s3` backend apply; a policy removed on one earns nothing on the others. The CI
 * platform is a local stand-in (an issuer with discovery and a JWKS, GitHub Actions' claims);
 * there is none here.
 */

const rgw = useRgw({ shared: true })
const servers: RunningServer[] = []
let keyDir: string
let bucket: string
let admin: string
let issuer: CiIssuer

beforeAll(async () => {
  issuer = await startCiIssuer({ alg: 'ES256' })
  keyDir = await mkdtemp(join(tmpdir(), 'cairn-ci-key-'))
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' })
  await writeFile(join(keyDir, 'signing.pem'), pem, { mode: 0o400 })
  bucket = await rgw.createBucket()
  servers.push(
    ...(await Promise.all(
      [0, 1, 2].map(() =>
        startServer({
          auth: true,
          args: ['-storage', 's3'],
          env: {
            SVC_S3_BUCKET: bucket,
            SVC_S3_PREFIX: 'ci',
            SVC_S3_ENDPOINT: rgw.endpoint,
            AWS_ACCESS_KEY_ID: rgw.accessKeyId,
            AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
            AWS_REGION: rgw.region,
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            SVC_TOKENS_PRIVATE_KEY_PEM_PATH: join(keyDir, 'signing.pem'),
          },
          startTimeoutMs: 30_000,
        }),
      ),
    )),
  )
  const maker = servers.find((server) => existsSync(join(server.dataDir, 'admin.token')))
  admin = await readAdminToken((maker as RunningServer).dataDir)
}, 120_000)
afterAll(async () => {
  await Promise.all(servers.map((server) => server.dispose()))
  await issuer.close()
  await rm(keyDir, { recursive: true, force: true })
})

const on = (index: number) => servers[index] as RunningServer

async function call(
  index: number,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
) {
  const answer = await fetch(`${on(index).url}${path}`, {
    method,
    headers: {
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
      'Content-Type': 'application/json',
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await answer.text()
  return { status: answer.status, text, json: () => JSON.parse(text) as Record<string, unknown> }
}

async function exchange(index: number): Promise<{ status: number; token: string }> {
  const now = Math.floor(Date.now() / 1000)
  const subject = await issuer.mint({
    iss: issuer.url,
    aud: 'cairn',
    repository: 'acme/infra',
    ref: 'refs/heads/main',
    run_id: '1',
    iat: now - 5,
    exp: now + 600,
  })
  const answer = await fetch(`${on(index).url}/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      subject_token: subject,
    }),
  })
  const body = (await answer.json()) as { access_token?: string }
  return { status: answer.status, token: body.access_token ?? '' }
}

describe('trust policies over three instances sharing one bucket', () => {
  it("apply on every instance at once, and the exchanged token's S3 credentials let Terraform's s3 backend apply", async () => {
    const set = await call(0, admin, 'POST', '/v1/auth/trust-policies', {
      name: 'shared',
      issuer: issuer.url,
      audience: 'cairn',
      claims: { repository: 'acme/infra', ref: 'refs/heads/main' },
      role: 'writer',
      scope: 'team/*',
    })
    expect(set.status, set.text).toBe(201)
    const exchanged = await exchange(1)
    expect(exchanged.status).toBe(200)
    const me = await call(2, exchanged.token, 'GET', '/v1/auth/me')
    expect(me.json()).toMatchObject({ subject: 'policy:shared' })
    const creds = await call(2, exchanged.token, 'POST', '/v1/auth/issue-s3-creds')
    expect(creds.status, creds.text).toBe(200)
    const { AccessKeyId, SecretAccessKey, SessionToken } = creds.json() as Record<string, string>

    const tf = await TerraformWorkspace.create({
      AWS_ACCESS_KEY_ID: AccessKeyId ?? '',
      AWS_SECRET_ACCESS_KEY: SecretAccessKey ?? '',
      AWS_SESSION_TOKEN: SessionToken ?? '',
    })
    try {
      await tf.write(
        'main.tf',
        `terraform {
${s3BackendBlock(on(0).url, 'team/ci-s3/terraform.tfstate')}
}

resource "terraform_data" "app" {
  input = "through s3"
}
`,
      )
      expect((await tf.run(['init', '-input=false'])).code).toBe(0)
      const applied = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(applied.code, applied.stderr).toBe(0)
    } finally {
      await tf.dispose()
    }
    const unit = await call(1, admin, 'GET', '/v1/units/team/ci-s3')
    expect(unit.json()).toMatchObject({ version_count: 1, locked: false })
    const versions = await call(2, admin, 'GET', '/v1/units/team/ci-s3/versions')
    expect((versions.json()['versions'] as { author: string }[])[0]?.author).toBe('policy:shared')

    // Removed on one instance, the policy earns nothing on the others.
    expect((await call(2, admin, 'DELETE', '/v1/auth/trust-policies/shared')).status).toBe(204)
    expect((await exchange(0)).status).toBe(401)
    expect((await exchange(1)).status).toBe(401)
  }, 120_000)
})
