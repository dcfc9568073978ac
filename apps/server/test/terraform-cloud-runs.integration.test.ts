import { httpsRequest, TerraformWorkspace, useServer, useTestCa, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

/** A configuration whose `cloud` block names `workspace` on `hostname`. */
function cloudConfig(hostname: string, workspace: string, body: string): string {
  return `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "acme"
    workspaces {
      name = "${workspace}"
    }
  }
}
${body}`
}

const GREETER = `
variable "greeting" {
  type    = string
  default = "hello"
}
resource "terraform_data" "app" {
  input = var.greeting
  provisioner "local-exec" {
    command = "echo provisioning \${self.input} on the agent"
  }
}
output "greeting" {
  value = terraform_data.app.output
}
`

const SLOW = `
resource "terraform_data" "slow" {
  input = timestamp()
  provisioner "local-exec" {
    command = "echo sleeping; sleep 60; echo woke"
  }
}
`

/** Terraform answers its prompts from stdin only when TF_INPUT allows it (the tests' default is 0). */
const ANSWERS = { TF_INPUT: '1' }

interface V1Run {
  id: string
  operation: string
  status: string
  phase: string
  error: string | null
  version: string | null
}

describe("Terraform's cloud block with remote execution: plans and applies run on Cairn's agents", () => {
  const tls = useTestCa()
  const server = useServer(() => ({
    auth: true,
    args: [...tls.serverArgs, '-runs', '-runs-local-agent', '-runs-heartbeat-timeout', '10s'],
  }))
  let hostname: string
  beforeAll(() => {
    hostname = `localhost:${server.port}`
  })

  const api = async (
    path: string,
    init: { method?: string; body?: string; json?: boolean } = {},
  ) => {
    const answer = await httpsRequest(`${server.url}${path}`, tls.ca, {
      ...(init.method === undefined ? {} : { method: init.method }),
      ...(init.body === undefined ? {} : { body: init.body }),
      headers: {
        Authorization: `Bearer ${server.token}`,
        ...(init.body === undefined
          ? {}
          : {
              'Content-Type': path.startsWith('/tfe/')
                ? 'application/vnd.api+json'
                : 'application/json',
            }),
      },
    })
    return {
      status: answer.status,
      text: answer.body,
      json: () => JSON.parse(answer.body) as Record<string, unknown>,
    }
  }
  const runsOf = async (unit: string): Promise<V1Run[]> =>
    ((await api(`/v1/runs?unit=${unit}`)).json() as { runs: V1Run[] }).runs
  const unitOf = async (unit: string) =>
    (await api(`/v1/units/${unit}`)).json() as { locked: boolean; serial: number | null }

  /** A directory with the configuration, initialised, its unit set to run remotely. */
  const workspaceFor = async (unit: string, body: string): Promise<TerraformWorkspace> => {
    const tf = await TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_${hostname}`]: server.token,
    })
    await tf.write('main.tf', cloudConfig(hostname, unit.replaceAll('/', '__'), body))
    const init = await tf.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
    return tf
  }

  describe('a workspace set to remote through /v1', () => {
    let tf: TerraformWorkspace
    beforeAll(async () => {
      tf = await workspaceFor('cloud/app', GREETER)
      const set = await api('/v1/runs/settings', {
        method: 'PUT',
        body: JSON.stringify({ unit: 'cloud/app', execution_mode: 'remote' }),
      })
      expect(set.status, set.text).toBe(200)
      expect(set.json()).toEqual({ unit: 'cloud/app', execution_mode: 'remote' })
    })
    afterAll(async () => {
      await tf.dispose()
    })

    it('shows the workspace as remote, with operations, and the organization entitled to them', async () => {
      const workspace = await api('/tfe/api/v2/organizations/acme/workspaces/cloud__app')
      expect(workspace.json()).toMatchObject({
        data: {
          attributes: {
            'execution-mode': 'remote',
            operations: true,
            permissions: { 'can-queue-run': true, 'can-queue-apply': true },
          },
        },
      })
      const entitlements = await api('/tfe/api/v2/organizations/acme/entitlement-set')
      expect(entitlements.json()).toMatchObject({ data: { attributes: { operations: true } } })
    })

    it('plans on the agent and streams the plan to the terminal; -detailed-exitcode says there are changes', async () => {
      const plan = await tf.run(['plan', '-input=false', '-detailed-exitcode'], {
        timeoutMs: 120_000,
      })
      expect(plan.code, plan.stderr).toBe(2)
      expect(plan.stdout).toContain('Running plan in Terraform Enterprise')
      expect(plan.stdout).toContain('terraform_data.app will be created')
      expect(plan.stdout).toContain('Plan: 1 to add, 0 to change, 0 to destroy.')
      const [run] = await runsOf('cloud/app')
      expect(run).toMatchObject({ operation: 'plan', status: 'succeeded' })
      // A plan takes no lock and writes no state.
      expect(await unitOf('cloud/app')).toMatchObject({ locked: false, serial: null })
    })

    it('passes -target and -refresh=false on to the plan on the agent', async () => {
      const plan = await tf.run(
        ['plan', '-input=false', '-refresh=false', '-target=terraform_data.app'],
        { timeoutMs: 120_000 },
      )
      expect(plan.code, plan.stderr).toBe(0)
      // Terraform on the agent says so when it plans with -target.
      expect(plan.stdout).toContain('Resource targeting is in effect')
      expect(plan.stdout).toContain('Plan: 1 to add, 0 to change, 0 to destroy.')
    })

    it('refuses a saved plan, saying why', async () => {
      const plan = await tf.run(['plan', '-input=false', '-out=saved.tfplan'], {
        timeoutMs: 120_000,
      })
      expect(plan.code).toBe(1)
      expect(plan.stderr).toContain('Cairn does not keep saved plans')
    })

    it('applies with -auto-approve and a -var: the apply streams, the state is written by the run', async () => {
      const apply = await tf.run(
        ['apply', '-auto-approve', '-input=false', '-var', 'greeting=from the cli'],
        {
          timeoutMs: 120_000,
        },
      )
      expect(apply.code, apply.stderr).toBe(0)
      expect(apply.stdout).toContain('Plan: 1 to add')
      expect(apply.stdout).toContain('provisioning from the cli on the agent')
      expect(apply.stdout).toContain('Apply complete! Resources: 1 added, 0 changed, 0 destroyed.')
      const [run] = await runsOf('cloud/app')
      expect(run).toMatchObject({ operation: 'apply', status: 'succeeded' })
      expect(run?.version).toEqual(expect.any(String))
      const versions = (await api('/v1/units/cloud/app/versions')).json() as {
        versions: { source: string }[]
      }
      expect(versions.versions[0]).toMatchObject({ source: 'run' })
      const unit = await unitOf('cloud/app')
      expect(unit.locked).toBe(false)
      expect(unit.serial).toBeGreaterThan(0)
      // The state is Cairn's: Terraform reads its outputs from it.
      const output = await tf.run(['output', '-raw', 'greeting'])
      expect(output.stdout).toBe('from the cli')
    })

    it('asks before it applies, and applies on yes', async () => {
      const apply = await tf.run(['apply', '-input=true', '-var', 'greeting=confirmed'], {
        timeoutMs: 120_000,
        input: 'yes\n',
        env: ANSWERS,
      })
      expect(apply.code, apply.stderr).toBe(0)
      expect(apply.stdout).toContain(
        'Do you want to perform these actions in workspace "cloud__app"?',
      )
      expect(apply.stdout).toContain('Apply complete! Resources: 0 added, 1 changed, 0 destroyed.')
      expect((await tf.run(['output', '-raw', 'greeting'])).stdout).toBe('confirmed')
    })

    it('discards the plan on no: nothing applied, the lock released', async () => {
      const before = await unitOf('cloud/app')
      const apply = await tf.run(['apply', '-input=true', '-var', 'greeting=declined'], {
        timeoutMs: 120_000,
        input: 'no\n',
        env: ANSWERS,
      })
      expect(apply.code).toBe(1)
      expect(apply.stderr).toContain('Apply discarded.')
      // The agent hears of the discard at its next heartbeat, and ends the run.
      const run = await waitFor(
        'the run to end',
        async () => {
          const [latest] = await runsOf('cloud/app')
          return latest?.status === 'canceled' ? latest : undefined
        },
        20_000,
        200,
      )
      expect(run).toMatchObject({ operation: 'apply', status: 'canceled' })
      expect(run.error).toContain('discarded by local-admin')
      expect((await unitOf('cloud/app')).locked).toBe(false)
      expect((await unitOf('cloud/app')).serial).toBe(before.serial)
    })

    it('says when there is nothing to apply, and applies nothing', async () => {
      const apply = await tf.run(['apply', '-auto-approve', '-var', 'greeting=confirmed'], {
        timeoutMs: 120_000,
      })
      expect(apply.code, apply.stderr).toBe(0)
      expect(apply.stdout).toContain('No changes.')
      const [run] = await runsOf('cloud/app')
      expect(run).toMatchObject({ operation: 'apply', status: 'succeeded', version: null })
    })

    it('destroys on yes', async () => {
      const destroy = await tf.run(['destroy', '-input=true'], {
        timeoutMs: 120_000,
        input: 'yes\n',
        env: ANSWERS,
      })
      expect(destroy.code, destroy.stderr).toBe(0)
      expect(destroy.stdout).toContain(
        'Do you really want to destroy all resources in workspace "cloud__app"?',
      )
      expect(destroy.stdout).toContain(
        'Apply complete! Resources: 0 added, 0 changed, 1 destroyed.',
      )
      const [run] = await runsOf('cloud/app')
      expect(run).toMatchObject({ operation: 'destroy', status: 'succeeded' })
    })
  })

  describe('a workspace set to remote through the TFE API', () => {
    let tf: TerraformWorkspace
    beforeAll(async () => {
      tf = await workspaceFor('cloud/slow', SLOW)
      const set = await api('/tfe/api/v2/organizations/acme/workspaces/cloud__slow', {
        method: 'PATCH',
        body: JSON.stringify({
          data: { type: 'workspaces', attributes: { 'execution-mode': 'agent' } },
        }),
      })
      expect(set.status, set.text).toBe(200)
      expect(set.json()).toMatchObject({ data: { attributes: { 'execution-mode': 'agent' } } })
    })
    afterAll(async () => {
      await tf.dispose()
    })

    it('cancels the remote apply on Ctrl-C: Terraform on the agent is interrupted, the lock released', async () => {
      const apply = tf.start(['apply', '-auto-approve', '-input=false'])
      await waitFor('the apply to print', () => apply.stdout().includes('sleeping'), 120_000, 100)
      apply.interrupt()
      const result = await apply.done
      expect(result.stdout).toContain('The remote operation was successfully cancelled.')
      const run = await waitFor(
        'the run to end',
        async () => {
          const [latest] = await runsOf('cloud/slow')
          return latest?.status === 'canceled' ? latest : undefined
        },
        60_000,
        250,
      )
      expect(run).toMatchObject({ operation: 'apply', status: 'canceled' })
      expect(await unitOf('cloud/slow')).toMatchObject({ locked: false })
    })
  })

  it("lists a workspace's runs, and serves a plan's log framed for go-tfe only at its signed URL", async () => {
    const listed = await api('/tfe/api/v2/workspaces/ws-cloud__app/runs')
    const runs = (listed.json() as { data: { id: string; attributes: { status: string } }[] }).data
    expect(runs.map((run) => run.attributes.status)).toEqual([
      'applied',
      'planned_and_finished',
      'discarded',
      'applied',
      'applied',
      'planned_and_finished',
      'planned_and_finished',
    ])
    const plan = await api(`/tfe/api/v2/plans/plan-${(runs[0]?.id ?? '').slice(4)}`)
    const { attributes } = (plan.json() as { data: { attributes: Record<string, unknown> } }).data
    expect(attributes).toMatchObject({ status: 'finished', 'resource-destructions': 1 })
    const url = String(attributes['log-read-url'])
    const log = await httpsRequest(`${url}?limit=65536&offset=0`, tls.ca)
    expect(log.status).toBe(200)
    expect(log.body.startsWith('\u0002')).toBe(true)
    expect(log.body.endsWith('\u0003')).toBe(true)
    expect(log.body).toContain('Plan: 0 to add, 0 to change, 1 to destroy.')
    // The offsets count the STX: a read from 1 is the text alone.
    const rest = await httpsRequest(`${url}?limit=5&offset=1`, tls.ca)
    expect(rest.body).toBe(log.body.slice(1, 6))
    const tampered = await httpsRequest(`${url.slice(0, -2)}xx?offset=0`, tls.ca)
    expect(tampered.status).toBe(403)
  })

  it('refuses a run on a workspace that runs locally, and a configuration that is no archive', async () => {
    const created = await api('/tfe/api/v2/organizations/acme/workspaces', {
      method: 'POST',
      body: JSON.stringify({ data: { type: 'workspaces', attributes: { name: 'cloud__local' } } }),
    })
    expect(created.status, created.text).toBe(201)
    const version = await api('/tfe/api/v2/workspaces/ws-cloud__local/configuration-versions', {
      method: 'POST',
      body: JSON.stringify({ data: { type: 'configuration-versions', attributes: {} } }),
    })
    expect(version.status, version.text).toBe(201)
    const attributes = (
      version.json() as { data: { id: string; attributes: { 'upload-url': string } } }
    ).data
    const upload = await httpsRequest(attributes.attributes['upload-url'], tls.ca, {
      method: 'PUT',
      body: 'not a tarball',
      headers: { 'Content-Type': 'application/octet-stream' },
    })
    expect(upload.status).toBe(400)
    const run = await api('/tfe/api/v2/runs', {
      method: 'POST',
      body: JSON.stringify({
        data: {
          type: 'runs',
          relationships: {
            workspace: { data: { type: 'workspaces', id: 'ws-cloud__local' } },
            'configuration-version': {
              data: { type: 'configuration-versions', id: attributes.id },
            },
          },
        },
      }),
    })
    expect(run.status).toBe(422)
    expect(run.text).toContain('runs locally')
  })
})
