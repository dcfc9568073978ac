import { httpsRequest, TerraformWorkspace, useServer, useTestCa } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const REASON = 'release freeze RF-42: no changes until Friday'

/** Terraform's error text with its box drawing and line wrapping folded into single spaces. */
const folded = (text: string) => text.replace(/[│\s]+/g, ' ')

function httpConfig(address: string, input: string): string {
  return `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
    username       = "cairn"
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}
`
}

function cloudConfig(hostname: string, input: string): string {
  return `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "team__cloud"
    }
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}
`
}

describe('a freeze against real Terraform, http backend and cloud block', () => {
  const tls = useTestCa()
  const server = useServer(() => ({ auth: true, args: tls.serverArgs }))
  let hostname: string
  let http: TerraformWorkspace
  let cloud: TerraformWorkspace

  const api = async (method: string, path: string, body?: unknown) => {
    const answer = await httpsRequest(`${server.url}/v1${path}`, tls.ca, {
      method,
      headers: { Authorization: `Bearer ${server.token}` },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    return { status: answer.status, text: answer.body }
  }

  const apply = (tf: TerraformWorkspace) =>
    tf.run(['apply', '-auto-approve', '-input=false'], {
      env: { TF_HTTP_PASSWORD: server.token },
    })

  beforeAll(async () => {
    hostname = `localhost:${server.port}`
    const env = { SSL_CERT_FILE: tls.caPath, [`TF_TOKEN_${hostname}`]: server.token }
    http = await TerraformWorkspace.create(env)
    cloud = await TerraformWorkspace.create(env)
    await http.write('main.tf', httpConfig(`${server.url}/v1/backend/team/http`, 'v1'))
    await cloud.write('main.tf', cloudConfig(hostname, 'v1'))
    for (const tf of [http, cloud]) {
      const init = await tf.run(['init', '-input=false'], {
        env: { TF_HTTP_PASSWORD: server.token },
      })
      expect(init.code, init.stderr).toBe(0)
      const first = await apply(tf)
      expect(first.code, first.stderr).toBe(0)
    }
  })
  afterAll(async () => {
    await http.dispose()
    await cloud.dispose()
  })

  it('refuses apply on both with the reason in its output, and lets it through once lifted', async () => {
    const created = await api('POST', '/freezes', { prefix: 'team/*', reason: REASON })
    expect(created.status, created.text).toBe(201)
    const { id } = JSON.parse(created.text) as { id: string }

    await http.write('main.tf', httpConfig(`${server.url}/v1/backend/team/http`, 'v2'))
    await cloud.write('main.tf', cloudConfig(hostname, 'v2'))
    for (const tf of [http, cloud]) {
      const refused = await apply(tf)
      expect(refused.code).not.toBe(0)
      const output = folded(refused.stdout + refused.stderr)
      expect(output).toContain(REASON)
      expect(output).toContain(id)
    }
    const versions = await api('GET', '/units/team/http')
    expect(JSON.parse(versions.text)).toMatchObject({ version_count: 1, locked: false })

    expect((await api('DELETE', `/freezes/${id}`)).status).toBe(204)
    for (const tf of [http, cloud]) {
      const again = await apply(tf)
      expect(again.code, again.stderr).toBe(0)
      expect(again.stdout).toContain('Apply complete!')
    }
  })
})
