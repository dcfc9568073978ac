import { createHash, randomBytes } from 'node:crypto'
import { Agent } from 'node:https'
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PutObjectCommand } from '@aws-sdk/client-s3'
import {
  httpsRequest,
  s3BackendBlock,
  TerraformWorkspace,
  useServer,
  useTestCa,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliSession } from './support/cairn-cli'
import { openState, sealState } from './support/opentofu-state'
import { s3Client, s3ErrorOf, type S3Credentials } from './support/s3'

/**
 * OpenTofu's client-side state encryption (DESIGN section 15) against the real server, with
 * `-require-client-encryption secure/*` and encryption at rest on. There is no OpenTofu on these
 * machines: its encrypted states are made in OpenTofu's format (support/opentofu-state.ts) and sent
 * as OpenTofu's backends send them. The plaintext writes refused are real Terraform's, on its
 * `http`, `s3` and `cloud` backends, and the `cairn` CLI's.
 */

const SECRET = 'pw-of-the-database-never-stored'
const PASSPHRASE = 'correct-horse-battery-staple-42'

/** Terraform's error text with its box drawing and line wrapping folded into single spaces. */
const folded = (text: string) => text.replace(/[│\s]+/g, ' ')

function plainState(serial: number, lineage = 'lineage-of-secure'): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.9.0',
    serial,
    lineage,
    outputs: { db_password: { value: SECRET, type: 'string', sensitive: true } },
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: 'db',
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [{ schema_version: 0, attributes: { id: 'db-1', input: SECRET } }],
      },
    ],
  })
}

const md5 = (text: string) => createHash('md5').update(text).digest('hex')

let dir: string
let keyPath: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cairn-client-encryption-'))
  keyPath = join(dir, 'k1.key')
  await writeFile(keyPath, randomBytes(32).toString('base64'))
  await chmod(keyPath, 0o600)
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('a server that requires client encryption under secure/*', () => {
  const tls = useTestCa()
  const server = useServer(() => ({
    auth: true,
    args: [
      ...tls.serverArgs,
      '-require-client-encryption',
      'secure/*',
      '-encryption-keys',
      `k1=file:${keyPath}`,
    ],
  }))

  const request = async (path: string, init: { method?: string; body?: string } = {}) => {
    const answer = await httpsRequest(`${server.url}${path}`, tls.ca, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
    })
    return {
      status: answer.status,
      text: answer.body,
      json: (): unknown => JSON.parse(answer.body),
    }
  }
  const s3Credentials = async () => {
    const issued = await request('/v1/auth/issue-s3-creds', { method: 'POST' })
    expect(issued.status, issued.text).toBe(200)
    return issued.json() as S3Credentials
  }
  const basic = () => `Basic ${Buffer.from(`cairn:${server.token}`).toString('base64')}`

  /** Every file of the data directory holding `text`. */
  const holding = async (text: string) => {
    const found: string[] = []
    for (const entry of await readdir(server.dataDir, { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue
      const file = join(entry.parentPath, entry.name)
      if ((await readFile(file)).includes(text)) found.push(file)
    }
    return found
  }

  it("stores OpenTofu's encrypted states as they are, on every way in, and says why it cannot look inside", async () => {
    const sealed = sealState(plainState(1), PASSPHRASE)
    // http: as OpenTofu's http backend posts a state.
    const http = await httpsRequest(`${server.url}/v1/backend/secure/http`, tls.ca, {
      method: 'POST',
      headers: {
        Authorization: basic(),
        'Content-MD5': Buffer.from(md5(sealed), 'hex').toString('base64'),
      },
      body: sealed,
    })
    expect(http.status, http.body).toBe(200)
    // /v1
    expect(
      (await request('/v1/units', { method: 'POST', body: '{"id":"secure/api"}' })).status,
    ).toBe(201)
    const api = await request('/v1/units/secure/api/upload', { method: 'POST', body: sealed })
    expect(api.status, api.text).toBe(200)
    // s3: the real AWS SDK, as OpenTofu's s3 backend puts a state.
    const s3 = s3Client(server.url, await s3Credentials(), {
      requestHandler: { httpsAgent: new Agent({ ca: tls.ca }) },
    })
    expect(
      await s3ErrorOf(
        s3.send(
          new PutObjectCommand({
            Bucket: 'tfstate',
            Key: 'secure/s3/terraform.tfstate',
            Body: sealed,
          }),
        ),
      ),
    ).toBe('succeeded')
    // cloud: as OpenTofu's cloud backend creates a state version, with the outputs it decrypted
    // locally in json-state-outputs (reference: runs-migration-encryption.md 2a).
    const workspace = await request('/tfe/api/v2/organizations/acme/workspaces', {
      method: 'POST',
      body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'secure__cloud' } } }),
    })
    expect(workspace.status, workspace.text).toBe(201)
    const workspaceId = (workspace.json() as { data: { id: string } }).data.id
    const outputs = { db_password: { sensitive: true, value: SECRET, type: 'string' } }
    const created = await request(`/tfe/api/v2/workspaces/${workspaceId}/state-versions`, {
      method: 'POST',
      body: JSON.stringify({
        data: {
          type: 'state-versions',
          attributes: {
            serial: 1,
            lineage: 'lineage-of-secure',
            md5: md5(sealed),
            force: false,
            state: Buffer.from(sealed).toString('base64'),
            'json-state-outputs': Buffer.from(JSON.stringify(outputs)).toString('base64'),
          },
        },
      }),
    })
    expect(created.status, created.text).toBe(201)

    for (const unit of ['secure/http', 'secure/api', 'secure/s3', 'secure/cloud']) {
      expect((await request(`/v1/units/${unit}`)).json(), unit).toMatchObject({
        serial: 1,
        lineage: 'lineage-of-secure',
        encrypted: 'client',
      })
      const versions = (await request(`/v1/units/${unit}/versions`)).json() as {
        versions: { encrypted?: string }[]
      }
      expect(versions.versions.map((version) => version.encrypted)).toEqual(['client'])
      const body = await request(`/v1/units/${unit}/download`)
      expect(body.text, unit).toBe(sealed)
      expect(openState(body.text, PASSPHRASE)).toBe(plainState(1))
    }
    // The outputs the cloud block sent in plain text are nowhere on disk, nor the state's text.
    expect(await holding(SECRET)).toEqual([])

    // The index, diff, search and output-based status say why they cannot look inside.
    const resources = (await request('/v1/units/secure/http/versions/current/resources')).json()
    expect(resources).toMatchObject({ indexed: false })
    expect((resources as { reason: string }).reason).toMatch(/^client_encrypted: /)
    const next = await httpsRequest(`${server.url}/v1/backend/secure/http`, tls.ca, {
      method: 'POST',
      headers: { Authorization: basic() },
      body: sealState(plainState(2), PASSPHRASE),
    })
    expect(next.status, next.body).toBe(200)
    const diff = await request('/v1/units/secure/http/diff')
    expect(diff.status).toBe(422)
    expect(diff.json()).toMatchObject({ error: 'client_encrypted' })
    const search = (await request('/v1/search?q=terraform_data&unit_prefix=secure/')).json() as {
      not_indexed: { unit: string; reason: string }[]
    }
    expect(search.not_indexed.map((entry) => entry.unit).sort()).toEqual([
      'secure/api',
      'secure/cloud',
      'secure/http',
      'secure/s3',
    ])
    for (const entry of search.not_indexed) expect(entry.reason).toMatch(/^client_encrypted: /)
    expect((await request('/v1/units', { method: 'POST', body: '{"id":"app"}' })).status).toBe(201)
    const edges = await request('/v1/units/app/dependencies', {
      method: 'PUT',
      body: JSON.stringify({
        dependencies: [{ from: 'secure/http' }, { from: 'secure/http', output: 'db_password' }],
      }),
    })
    expect(edges.status, edges.text).toBe(200)
    expect((await request('/v1/units/app/status')).json()).toMatchObject({
      status: 'green',
      edges: [
        { from: 'secure/http', state: 'ok' },
        {
          from: 'secure/http',
          output: 'db_password',
          state: 'unknown',
          reason: 'client_encrypted',
        },
      ],
    })

    // The CLI marks them.
    const cli = await CliSession.create()
    try {
      const login = await cli.run(
        ['login', '--server', server.url, '--token-stdin', '--ca-file', tls.caPath],
        server.token,
      )
      expect(login.code, login.stderr).toBe(0)
      const info = await cli.run(['unit', 'info', 'secure/http'])
      expect(info.stdout).toContain('encrypted client (OpenTofu)')
      const listed = await cli.run(['unit', 'versions', 'secure/http'])
      expect(listed.stdout).toContain('2 (client-encrypted)')
      const shown = await cli.run(['unit', 'show', 'secure/http'])
      expect(shown.stdout).toContain('is not indexed: client_encrypted:')
      const status = await cli.run(['unit', 'status', 'app'])
      expect(status.stdout).toContain('unknown (client_encrypted)')
      // A plaintext push is refused, in the CLI's words.
      await writeFile(join(dir, 'plain.tfstate'), plainState(3))
      const pushed = await cli.run(['unit', 'push', 'secure/api', join(dir, 'plain.tfstate')])
      expect(pushed.code).not.toBe(0)
      expect(pushed.stderr).toContain('requires states encrypted on the client')
    } finally {
      await cli.dispose()
    }
  })

  describe("refuses real Terraform's plaintext states under secure/* on every backend", () => {
    let workspaces: TerraformWorkspace[] = []
    afterAll(async () => {
      await Promise.all(workspaces.map((workspace) => workspace.dispose()))
      workspaces = []
    })

    const resource = `
resource "terraform_data" "app" {
  input = "v1"
}
`
    const refused = async (backend: string, env: Record<string, string>) => {
      const tf = await TerraformWorkspace.create({ SSL_CERT_FILE: tls.caPath, ...env })
      workspaces.push(tf)
      await tf.write('main.tf', `terraform {\n${backend}\n}\n${resource}`)
      const init = await tf.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const applied = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(applied.code).not.toBe(0)
      return folded(applied.stdout + applied.stderr)
    }

    it('http: Terraform prints the status, and nothing is kept', async () => {
      const address = `${server.url}/v1/backend/secure/tf-http`
      const output = await refused(
        `  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
    username       = "cairn"
    password       = "${server.token}"
  }`,
        {},
      )
      expect(output).toContain('HTTP error: 422')
      expect((await request('/v1/units/secure/tf-http')).json()).toMatchObject({
        version_count: 0,
        locked: false,
      })
    })

    it('cloud: Terraform prints the reason', async () => {
      const hostname = `localhost:${server.port}`
      const output = await refused(
        `  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "secure__tf-cloud"
    }
  }`,
        { [`TF_TOKEN_${hostname}`]: server.token },
      )
      expect(output).toContain('requires states encrypted on the client')
      // Terraform's cloud backend sends no unlock after a state it could not save (against HCP
      // Terraform too): the workspace stays locked until `terraform force-unlock`.
      expect((await request('/v1/units/secure/tf-cloud')).json()).toMatchObject({
        version_count: 0,
        locked: true,
      })
      // The cloud backend names its lock after the workspace.
      const tf = workspaces.at(-1) as TerraformWorkspace
      const unlocked = await tf.run(['force-unlock', '-force', 'acme/secure__tf-cloud'])
      expect(unlocked.code, unlocked.stderr).toBe(0)
      expect((await request('/v1/units/secure/tf-cloud')).json()).toMatchObject({ locked: false })
    })

    it("s3: Terraform prints S3's error with the reason", async () => {
      const credentials = await s3Credentials()
      const output = await refused(s3BackendBlock(server.url, 'secure/tf-s3/terraform.tfstate'), {
        AWS_ACCESS_KEY_ID: credentials.AccessKeyId,
        AWS_SECRET_ACCESS_KEY: credentials.SecretAccessKey,
        AWS_SESSION_TOKEN: credentials.SessionToken,
        AWS_CA_BUNDLE: tls.caPath,
      })
      expect(output).toContain(
        'api error InvalidArgument: secure/tf-s3 requires states encrypted on the client',
      )
      expect(output).toContain('requires states encrypted on the client')
      const unit = await request('/v1/units/secure/tf-s3')
      expect(
        unit.status === 404 || (unit.json() as { version_count: number }).version_count === 0,
      ).toBe(true)
    })
  })
})
