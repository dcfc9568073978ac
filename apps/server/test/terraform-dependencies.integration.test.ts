import { TerraformWorkspace, useServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

interface Status {
  id: string
  status: 'red' | 'yellow' | 'green'
  edges: { from: string; output?: string; state: string; since?: { serial: number | null } }[]
  red_upstream: string[]
}

/** The `http` backend block of a unit, and a remote-state data source reading another. */
function backend(url: string, unit: string): string {
  const address = `${url}/v1/backend/${unit}`
  return `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
  }
}
`
}

function remoteState(url: string, name: string, unit: string): string {
  return `data "terraform_remote_state" "${name}" {
  backend = "http"
  config = {
    address = "${url}/v1/backend/${unit}"
  }
}
`
}

/**
 * Three units whose outputs feed each other through `terraform_remote_state`: the network's VPC
 * goes into the app, the app's URL into the DNS record. The network also has an output nobody
 * reads.
 */
function configurations(url: string): Record<string, string> {
  return {
    'deps/net': `${backend(url, 'deps/net')}
variable "vpc" {
  type = string
}

variable "note" {
  type    = string
  default = "first"
}

resource "terraform_data" "vpc" {
  input = var.vpc
}

output "vpc" {
  value = terraform_data.vpc.output
}

output "note" {
  value = var.note
}
`,
    'deps/app': `${backend(url, 'deps/app')}
${remoteState(url, 'net', 'deps/net')}
resource "terraform_data" "app" {
  input = data.terraform_remote_state.net.outputs.vpc
}

output "url" {
  value = "app-in-\${terraform_data.app.output}"
}
`,
    'deps/dns': `${backend(url, 'deps/dns')}
${remoteState(url, 'app', 'deps/app')}
variable "ttl" {
  type    = number
  default = 300
}

resource "terraform_data" "record" {
  input = "\${data.terraform_remote_state.app.outputs.url} ttl=\${var.ttl}"
}
`,
  }
}

describe('dependency status through real Terraform on the http backend', () => {
  const server = useServer()
  const workspaces = new Map<string, TerraformWorkspace>()

  const api = (path: string, init?: RequestInit) => fetch(`${server.url}/v1/${path}`, init)
  const status = async (unit: string) => {
    const response = await api(`units/${unit}/status`)
    expect(response.status).toBe(200)
    return (await response.json()) as Status
  }
  const colours = async () => ({
    net: (await status('deps/net')).status,
    app: (await status('deps/app')).status,
    dns: (await status('deps/dns')).status,
  })
  const apply = async (unit: string, vars: string[] = []) => {
    const workspace = workspaces.get(unit)
    if (workspace === undefined) throw new Error(`no workspace for ${unit}`)
    const args = ['apply', '-auto-approve', '-input=false', ...vars.map((v) => `-var=${v}`)]
    const result = await workspace.run(args)
    expect(result.code, result.stderr).toBe(0)
    return result
  }

  beforeAll(async () => {
    for (const [unit, text] of Object.entries(configurations(server.url))) {
      const workspace = await TerraformWorkspace.create()
      await workspace.write('main.tf', text)
      workspaces.set(unit, workspace)
      const created = await api('units', { method: 'POST', body: JSON.stringify({ id: unit }) })
      expect(created.status).toBe(201)
    }
    const declare = async (unit: string, dependencies: unknown[]) => {
      const response = await api(`units/${unit}/dependencies`, {
        method: 'PUT',
        body: JSON.stringify({ dependencies }),
      })
      expect(response.status, await response.clone().text()).toBe(200)
    }
    await declare('deps/app', [{ from: 'deps/net', output: 'vpc' }])
    await declare('deps/dns', [{ from: 'deps/app', output: 'url' }])
    await Promise.all(
      [...workspaces.values()].map(async (workspace) => {
        const init = await workspace.run(['init', '-input=false'])
        expect(init.code, init.stderr).toBe(0)
      }),
    )
  })
  afterAll(async () => {
    for (const workspace of workspaces.values()) await workspace.dispose()
  })

  it('applied for the first time, in order: each consumer is red until it applies', async () => {
    // Terraform's remote-state data source needs the upstream's state, so the first round
    // must go in order; the edges were declared before any state existed.
    expect((await status('deps/app')).edges).toEqual([
      { from: 'deps/net', output: 'vpc', state: 'unknown' },
    ])
    await apply('deps/net', ['vpc=vpc-1'])
    expect(await colours()).toEqual({ net: 'green', app: 'red', dns: 'yellow' })
    expect(await status('deps/app')).toMatchObject({
      edges: [{ from: 'deps/net', output: 'vpc', state: 'pending', since: { serial: 1 } }],
    })
    await apply('deps/app')
    expect(await colours()).toEqual({ net: 'green', app: 'green', dns: 'red' })
    await apply('deps/dns')
    expect(await colours()).toEqual({ net: 'green', app: 'green', dns: 'green' })
  })

  it('ignores a change to an output nothing consumes', async () => {
    await apply('deps/net', ['vpc=vpc-1', 'note=second'])
    expect(await colours()).toEqual({ net: 'green', app: 'green', dns: 'green' })
  })

  it('after a consumed output changes, applied in the wrong order and then the right one', async () => {
    await apply('deps/net', ['vpc=vpc-2', 'note=second'])
    expect(await colours()).toEqual({ net: 'green', app: 'red', dns: 'yellow' })
    expect(await status('deps/dns')).toMatchObject({
      status: 'yellow',
      edges: [{ from: 'deps/app', output: 'url', state: 'ok' }],
      red_upstream: ['deps/app'],
    })

    // The wrong order: the DNS record before the app. Its write changes nothing upstream.
    await apply('deps/dns', ['ttl=60'])
    expect(await colours()).toEqual({ net: 'green', app: 'red', dns: 'yellow' })

    // The right order: the app, whose URL changes, and then the DNS record.
    await apply('deps/app')
    expect(await colours()).toEqual({ net: 'green', app: 'green', dns: 'red' })
    await apply('deps/dns', ['ttl=60'])
    expect(await colours()).toEqual({ net: 'green', app: 'green', dns: 'green' })

    const response = await api('status?prefix=deps/')
    const body = (await response.json()) as { units: Status[]; next_cursor: string | null }
    expect(body.units.map((unit) => [unit.id, unit.status])).toEqual([
      ['deps/app', 'green'],
      ['deps/dns', 'green'],
      ['deps/net', 'green'],
    ])
    expect(body.next_cursor).toBeNull()
  })
})
