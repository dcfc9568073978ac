import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { httpsRequest, TerraformWorkspace, useServer, useTestCa } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Outputs-only sharing with the real Terraform (issue 12, DESIGN section 9): a consumer holding
// only `unit:outputs` on team/net applies a configuration whose `terraform_remote_state` reads
// team/net through the `remote` and `cloud` backends, which download the whole state
// (terraform-wire.md A3), and never gets a byte of team/net's resources.

const ORG = 'acme'
const UPSTREAM = 'team__net'
/** What only team/net's resources hold: none of it may reach the consumer. */
const HIDDEN = ['private_vault', 'do-not-share-7f3a9c']

const upstreamConfig = (hostname: string) => `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "${ORG}"
    workspaces {
      name = "${UPSTREAM}"
    }
  }
}

resource "terraform_data" "private_vault" {
  input = "do-not-share-7f3a9c"
}

output "vpc_id" {
  value = "vpc-0a1b2c3d"
}

output "subnets" {
  value = ["subnet-a", "subnet-b"]
}

output "db_password" {
  value     = "hunter2-upstream"
  sensitive = true
}
`

/** Local state; team/net's outputs read through both backends that speak the TFE API. */
const downstreamConfig = (hostname: string) => `locals {
  upstream = {
    hostname     = "${hostname}"
    organization = "${ORG}"
    workspaces   = { name = "${UPSTREAM}" }
  }
}

data "terraform_remote_state" "net" {
  backend = "remote"
  config  = local.upstream
}

data "terraform_remote_state" "net_cloud" {
  backend   = "cloud"
  workspace = "${UPSTREAM}"
  config    = local.upstream
}

resource "terraform_data" "app" {
  input = data.terraform_remote_state.net.outputs.vpc_id
}

output "vpc_id" {
  value = terraform_data.app.output
}

output "vpc_id_via_cloud" {
  value = data.terraform_remote_state.net_cloud.outputs.vpc_id
}

output "subnets" {
  value = data.terraform_remote_state.net.outputs.subnets
}

output "db_password" {
  value     = data.terraform_remote_state.net.outputs.db_password
  sensitive = true
}
`

interface StateFile {
  serial: number
  lineage: string
  outputs: Record<string, { value: unknown; sensitive?: boolean }>
  resources: unknown[]
}

/** The view leaks nothing: no resources, none of their names or values anywhere in the bytes. */
function expectOutputsOnly(text: string, upstream: StateFile): void {
  for (const hidden of HIDDEN) expect(text).not.toContain(hidden)
  const state = JSON.parse(text) as StateFile
  expect(state).toMatchObject({ serial: upstream.serial, lineage: upstream.lineage })
  expect(state.resources).toEqual([])
  expect(state.outputs).toEqual(upstream.outputs)
}

describe('an outputs-only consumer with the real Terraform, RBAC on', () => {
  const tls = useTestCa()
  const server = useServer(() => ({
    auth: true,
    env: { SVC_RBAC_ENABLED: 'true' },
    args: tls.serverArgs,
  }))

  const call = (path: string, token: string, init: { method?: string; body?: string } = {}) =>
    httpsRequest(`${server.url}${path}`, tls.ca, {
      ...init,
      headers: { Authorization: `Bearer ${token}` },
    })
  const asAdmin = async (path: string, init: { method?: string; body?: string } = {}) => {
    const answer = await call(path, server.token, init)
    expect(answer.status, answer.body).toBeLessThan(300)
    return JSON.parse(answer.body) as Record<string, unknown>
  }
  /** Terraform with the server's CA trusted and `token` as its only credential for the server. */
  const terraform = (token: string) =>
    TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_localhost:${server.port}`]: token,
    })

  let hostname: string
  let upstream: TerraformWorkspace
  /** team/net's state as the admin pulls it. */
  let upstreamState: StateFile
  let consumer: string
  beforeAll(async () => {
    hostname = `localhost:${server.port}`
    upstream = await terraform(server.token)
    await upstream.write('main.tf', upstreamConfig(hostname))
    const init = await upstream.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
    const apply = await upstream.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    const pulled = await upstream.run(['state', 'pull'])
    upstreamState = JSON.parse(pulled.stdout) as StateFile
    // The real state holds what the consumer must never see.
    for (const hidden of HIDDEN) expect(pulled.stdout).toContain(hidden)
    const created = await asAdmin('/v1/auth/tokens', {
      method: 'POST',
      body: JSON.stringify({ name: 'consumer', scope: 'team/net', role: 'outputs-reader' }),
    })
    consumer = String(created['token'])
  }, 120_000)
  afterAll(async () => {
    await upstream.dispose()
  })

  /** What a consumer's request must not change: team/net's versions and lock. */
  const upstreamNow = async () => ({
    unit: await asAdmin('/v1/units/team/net'),
    versions: await asAdmin('/v1/units/team/net/versions'),
  })

  it('applies a configuration whose terraform_remote_state reads the upstream through the remote and cloud backends', async () => {
    const before = await upstreamNow()
    const downstream = await terraform(consumer)
    try {
      await downstream.write('main.tf', downstreamConfig(hostname))
      const init = await downstream.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const apply = await downstream.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      const outputs = JSON.parse((await downstream.run(['output', '-json'])).stdout) as Record<
        string,
        { value: unknown; sensitive: boolean }
      >
      expect(Object.keys(outputs).sort()).toEqual([
        'db_password',
        'subnets',
        'vpc_id',
        'vpc_id_via_cloud',
      ])
      expect(outputs['vpc_id']).toMatchObject({ value: 'vpc-0a1b2c3d' })
      expect(outputs['vpc_id_via_cloud']).toMatchObject({ value: 'vpc-0a1b2c3d' })
      expect(outputs['subnets']).toMatchObject({ value: ['subnet-a', 'subnet-b'] })
      expect(outputs['db_password']).toMatchObject({ value: 'hunter2-upstream', sensitive: true })
      // The consumer's own state keeps what its data sources read: outputs, nothing more.
      const local = await readFile(join(downstream.dir, 'terraform.tfstate'), 'utf8')
      expect(local).toContain('vpc-0a1b2c3d')
      for (const hidden of HIDDEN) expect(local).not.toContain(hidden)
    } finally {
      await downstream.dispose()
    }
    expect(await upstreamNow()).toEqual(before)
  })

  it('pulls only the outputs-only view of the upstream through the cloud block, and may not apply to it', async () => {
    const before = await upstreamNow()
    const tf = await terraform(consumer)
    try {
      await tf.write('main.tf', upstreamConfig(hostname))
      const init = await tf.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const pulled = await tf.run(['state', 'pull'])
      expect(pulled.code, pulled.stderr).toBe(0)
      expectOutputsOnly(pulled.stdout, upstreamState)
      expect((await tf.run(['state', 'list'])).stdout.trim()).toBe('')
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code).not.toBe(0)
      expect(apply.stderr.replace(/[│\s]+/g, ' ')).toContain('does not have unit:lock on team/net')
    } finally {
      await tf.dispose()
    }
    expect(await upstreamNow()).toEqual(before)
  })

  it('downloads the view, with its own md5, from the URL the current state version names', async () => {
    const api = '/tfe/api/v2'
    const current = await call(`${api}/workspaces/ws-${UPSTREAM}/current-state-version`, consumer)
    expect(current.status, current.body).toBe(200)
    const { attributes } = (
      JSON.parse(current.body) as { data: { attributes: Record<string, unknown> } }
    ).data
    expect(attributes).toMatchObject({
      serial: upstreamState.serial,
      lineage: upstreamState.lineage,
    })
    const url = String(attributes['hosted-state-download-url'])
    const download = await httpsRequest(url, tls.ca, {
      headers: { Authorization: `Bearer ${consumer}` },
    })
    expect(download.status, download.body).toBe(200)
    expectOutputsOnly(download.body, upstreamState)
    expect(attributes['md5']).toBe(createHash('md5').update(download.body).digest('hex'))
    // The admin, a reader, gets the real bytes from the same URL.
    const real = await httpsRequest(url, tls.ca, {
      headers: { Authorization: `Bearer ${server.token}` },
    })
    expect(JSON.parse(real.body)).toEqual(upstreamState)
  })

  it('is refused the state on /v1 and on the http backend, and reads the outputs on /v1', async () => {
    for (const path of ['/v1/units/team/net/download', '/v1/units/team/net/versions']) {
      const refused = await call(path, consumer)
      expect(refused.status, path).toBe(403)
      expect(refused.body).toContain('unit:read')
      for (const hidden of HIDDEN) expect(refused.body).not.toContain(hidden)
    }
    const backend = await httpsRequest(`${server.url}/v1/backend/team/net`, tls.ca, {
      headers: { Authorization: `Basic ${Buffer.from(`x:${consumer}`).toString('base64')}` },
    })
    expect(backend.status).toBe(403)
    for (const hidden of HIDDEN) expect(backend.body).not.toContain(hidden)
    const outputs = await call('/v1/units/team/net/outputs', consumer)
    expect(outputs.status, outputs.body).toBe(200)
    expect(JSON.parse(outputs.body)).toMatchObject({
      outputs: { vpc_id: { value: 'vpc-0a1b2c3d' } },
    })
  })
})
