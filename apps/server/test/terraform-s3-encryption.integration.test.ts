import { randomBytes } from 'node:crypto'
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs'
import { readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { s3BackendBlock, TerraformWorkspace, useServer, type SuiteServer } from '@cairn/testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { issueS3Credentials } from './support/s3'

/**
 * The server-side encryption options of Terraform's `s3` backend (`encrypt`, `kms_key_id`,
 * `sse_customer_key`) against the real server (DESIGN section 15): honoured where the server
 * encrypts at rest, refused with S3's error and a reason Terraform prints where it cannot, never
 * ignored.
 */

const SECRET = 'sse-output-never-on-disk'

/** Terraform's error text with its box drawing and line wrapping folded into single spaces. */
const folded = (text: string) => text.replace(/[│\s]+/g, ' ')

// The key exists before the servers of the suite start.
const dir = mkdtempSync(join(tmpdir(), 'cairn-s3-sse-'))
const keyPath = join(dir, 'k2.key')
writeFileSync(keyPath, randomBytes(32).toString('base64'))
chmodSync(keyPath, 0o600)

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

function configuration(url: string, unit: string, options: string): string {
  return `terraform {
${s3BackendBlock(url, `${unit}/terraform.tfstate`, [options.trim()])}
}

output "password" {
  value     = "${SECRET}"
  sensitive = true
}
`
}

/** `terraform init` and `apply` in a new workspace against `server`: the apply's result. */
async function apply(
  server: SuiteServer,
  unit: string,
  options: string,
  workspaces: TerraformWorkspace[],
) {
  const credentials = await issueS3Credentials(server.url, server.token)
  const tf = await TerraformWorkspace.create({
    AWS_ACCESS_KEY_ID: credentials.AccessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.SecretAccessKey,
    AWS_SESSION_TOKEN: credentials.SessionToken,
  })
  workspaces.push(tf)
  await tf.write('main.tf', configuration(server.url, unit, options))
  const init = await tf.run(['init', '-input=false'])
  expect(init.code, init.stderr).toBe(0)
  const applied = await tf.run(['apply', '-auto-approve', '-input=false'])
  return { ...applied, output: folded(applied.stdout + applied.stderr) }
}

async function versionsOf(server: SuiteServer, unit: string): Promise<number> {
  const answer = await fetch(`${server.url}/v1/units/${unit}`, {
    headers: { Authorization: `Bearer ${server.token}` },
  })
  if (answer.status === 404) return 0
  return ((await answer.json()) as { version_count: number }).version_count
}

describe('a server without encryption at rest', () => {
  const server = useServer({ auth: true })
  const workspaces: TerraformWorkspace[] = []
  afterAll(async () => {
    await Promise.all(workspaces.map((tf) => tf.dispose()))
  })

  it('refuses encrypt = true, and Terraform prints why', async () => {
    const applied = await apply(server, 'team/plain', '    encrypt = true', workspaces)
    expect(applied.code).not.toBe(0)
    // Refused at the lock file, before anything changes (as docs/terraform-s3.md shows).
    expect(applied.output).toContain('Error: Error acquiring the state lock')
    expect(applied.output).toContain(
      'api error InvalidArgument: x-amz-server-side-encryption AES256 asks for encryption at rest, which this server is not configured for',
    )
    expect(await versionsOf(server, 'team/plain')).toBe(0)
  })
})

describe('a server that encrypts at rest under k2', () => {
  const server = useServer(() => ({ auth: true, args: ['-encryption-keys', `k2=file:${keyPath}`] }))
  const workspaces: TerraformWorkspace[] = []
  afterAll(async () => {
    await Promise.all(workspaces.map((tf) => tf.dispose()))
  })

  it('honours encrypt = true and kms_key_id naming k2, keeping no plaintext on disk', async () => {
    const aes = await apply(server, 'team/aes', '    encrypt = true', workspaces)
    expect(aes.code, aes.output).toBe(0)
    const kms = await apply(
      server,
      'team/kms',
      '    encrypt    = true\n    kms_key_id = "alias/k2"',
      workspaces,
    )
    expect(kms.code, kms.output).toBe(0)
    expect(await versionsOf(server, 'team/aes')).toBe(1)
    expect(await versionsOf(server, 'team/kms')).toBe(1)
    const holding: string[] = []
    for (const entry of await readdir(server.dataDir, { withFileTypes: true, recursive: true })) {
      const file = join(entry.parentPath, entry.name)
      if (entry.isFile() && (await readFile(file)).includes(SECRET)) holding.push(file)
    }
    expect(holding).toEqual([])
  })

  it('refuses a KMS key it does not encrypt with, and a customer-provided key', async () => {
    const other = await apply(
      server,
      'team/other-kms',
      '    encrypt    = true\n    kms_key_id = "alias/k1"',
      workspaces,
    )
    expect(other.code).not.toBe(0)
    expect(other.output).toContain(
      'api error InvalidArgument: KMS key "alias/k1" is not the key this server encrypts with; name k2',
    )
    const customer = await apply(
      server,
      'team/sse-c',
      `    encrypt          = true\n    sse_customer_key = "${randomBytes(32).toString('base64')}"`,
      workspaces,
    )
    expect(customer.code).not.toBe(0)
    expect(customer.output).toContain(
      "api error InvalidArgument: customer-provided keys (SSE-C, the s3 backend's sse_customer_key) are not supported",
    )
    expect(await versionsOf(server, 'team/other-kms')).toBe(0)
    expect(await versionsOf(server, 'team/sse-c')).toBe(0)
  })
})
