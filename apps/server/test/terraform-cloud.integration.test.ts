import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { httpsRequest, TerraformWorkspace, useServer, useTestCa, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const ORG = 'acme'

/** A configuration with a `cloud` block for `hostname`, by workspace name or by tags. */
function cloudConfig(hostname: string, workspaces: string, input = 'hello'): string {
  return `terraform {
  cloud {
    hostname     = "${hostname}"
    organization = "${ORG}"
    workspaces {
      ${workspaces}
    }
  }
}

resource "terraform_data" "app" {
  input = "${input}"
}

output "greeting" {
  value = terraform_data.app.output
}

output "password" {
  value     = "s3cr3t-${input}"
  sensitive = true
}
`
}

/** Terraform's lock-conflict message folded out of its boxed, wrapped error text. */
const folded = (text: string) => text.replace(/[│\s]+/g, ' ')

describe("Terraform's cloud block over real TLS", () => {
  const tls = useTestCa()
  const server = useServer(() => ({
    auth: true,
    args: tls.serverArgs,
  }))
  let hostname: string
  beforeAll(() => {
    hostname = `localhost:${server.port}`
  })

  /** /v1 over the test CA, with the admin token. */
  const api = async (path: string, init: { method?: string; body?: string } = {}) => {
    const answer = await httpsRequest(`${server.url}/v1${path}`, tls.ca, {
      ...init,
      headers: { Authorization: `Bearer ${server.token}` },
    })
    return {
      status: answer.status,
      json: () => JSON.parse(answer.body) as Record<string, unknown>,
      text: answer.body,
    }
  }

  const workspace = async (): Promise<TerraformWorkspace> =>
    TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_${hostname}`]: server.token,
    })

  describe('with workspaces { name }', () => {
    let tf: TerraformWorkspace
    beforeAll(async () => {
      tf = await workspace()
      await tf.write('main.tf', cloudConfig(hostname, 'name = "team__app__prod"'))
    })
    afterAll(async () => {
      await tf.dispose()
    })

    it('creates the workspace at init, as unit team/app/prod', async () => {
      const init = await tf.run(['init', '-input=false'])
      expect(init.code, init.stderr).toBe(0)
      const unit = await api('/units/team/app/prod')
      expect(unit.status).toBe(200)
      expect(unit.json()).toMatchObject({ id: 'team/app/prod', version_count: 0 })
    })

    it('applies, and lists and outputs what it applied, sensitive outputs too', async () => {
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      expect((await tf.run(['state', 'list'])).stdout.trim()).toBe('terraform_data.app')
      expect((await tf.run(['output', '-raw', 'greeting'])).stdout).toBe('hello')
      expect((await tf.run(['output', '-raw', 'password'])).stdout).toBe('s3cr3t-hello')
      const all = await tf.run(['output', '-json'])
      expect(JSON.parse(all.stdout)).toMatchObject({
        greeting: { value: 'hello', sensitive: false },
        password: { value: 's3cr3t-hello', sensitive: true },
      })
      expect((await api('/units/team/app/prod')).json()).toMatchObject({
        version_count: 1,
        locked: false,
      })
    })

    it('pulls exactly the bytes /v1 downloads', async () => {
      const pulled = await tf.run(['state', 'pull'])
      const downloaded = await api('/units/team/app/prod/download')
      expect(JSON.parse(pulled.stdout)).toEqual(JSON.parse(downloaded.text))
      expect((await api('/units/team/app/prod/versions')).json()).toMatchObject({
        versions: [{ source: 'cloud', author: 'local-admin' }],
      })
    })

    it('refuses to push an older serial, and pushes it with -force', async () => {
      const old = join(tf.dir, 'old.tfstate')
      await writeFile(old, (await tf.run(['state', 'pull'])).stdout)
      await tf.write('main.tf', cloudConfig(hostname, 'name = "team__app__prod"', 'second'))
      expect((await tf.run(['apply', '-auto-approve', '-input=false'])).code).toBe(0)
      const refused = await tf.run(['state', 'push', old])
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain('cannot import state with serial')
      const forced = await tf.run(['state', 'push', '-force', old])
      expect(forced.code, forced.stderr).toBe(0)
      expect((await tf.run(['output', '-raw', 'greeting'])).stdout).toBe('hello')
      expect((await api('/units/team/app/prod')).json()).toMatchObject({ locked: false })
    })

    it('fails apply -lock-timeout=3s while /v1 holds the lock, naming the lock', async () => {
      const lock = await api('/units/team/app/prod/lock', {
        method: 'POST',
        body: '{"Who":"ops@laptop"}',
      })
      const lockId = lock.json()['ID'] as string
      try {
        const apply = await tf.run(['apply', '-auto-approve', '-input=false', '-lock-timeout=3s'])
        expect(apply.code).not.toBe(0)
        expect(folded(apply.stderr)).toContain('workspace already locked')
        expect(folded(apply.stderr)).toContain(`${ORG}/team__app__prod`)
      } finally {
        await api('/units/team/app/prod/unlock', {
          method: 'DELETE',
          body: JSON.stringify({ ID: lockId }),
        })
      }
    })

    it('waits out a lock released within -lock-timeout, then applies', async () => {
      const lock = await api('/units/team/app/prod/lock', { method: 'POST', body: '{}' })
      expect(lock.status, lock.text).toBe(200)
      const lockId = lock.json()['ID'] as string
      const before = (await api('/units/team/app/prod')).json()['version_count'] as number
      await tf.write('main.tf', cloudConfig(hostname, 'name = "team__app__prod"', 'third'))
      const running = tf.run(['apply', '-auto-approve', '-input=false', '-lock-timeout=60s'])
      await waitFor(
        'Terraform to be refused the lock once',
        () =>
          server
            .output()
            .includes(
              '"path":"/tfe/api/v2/workspaces/ws-team__app__prod/actions/lock","status":409',
            ),
        30_000,
      )
      expect(
        (
          await api('/units/team/app/prod/unlock', {
            method: 'DELETE',
            body: JSON.stringify({ ID: lockId }),
          })
        ).status,
      ).toBe(200)
      const apply = await running
      expect(apply.code, apply.stderr).toBe(0)
      expect((await api('/units/team/app/prod')).json()['version_count']).toBe(before + 1)
    })

    it('force-unlocks a lock left behind, by <org>/<workspace>', async () => {
      await api('/units/team/app/prod/lock', { method: 'POST', body: '{"Who":"crashed-run"}' })
      const unlock = await tf.run(['force-unlock', '-force', `${ORG}/team__app__prod`])
      expect(unlock.code, unlock.stderr).toBe(0)
      expect((await api('/units/team/app/prod')).json()).toMatchObject({ locked: false })
      const history = (await api('/units/team/app/prod/history')).json() as {
        events: { type: string; source: string }[]
      }
      expect(history.events[0]).toMatchObject({ type: 'force_unlock', source: 'cloud' })
    })
  })

  describe('with workspaces { tags }', () => {
    let tf: TerraformWorkspace
    beforeAll(async () => {
      tf = await workspace()
      await tf.write('main.tf', cloudConfig(hostname, 'tags = ["app", "tagged"]'))
    })
    afterAll(async () => {
      await tf.dispose()
    })

    it('creates, lists, selects and deletes workspaces that carry the tags', async () => {
      const init = await tf.run(['init'], { input: 'blue\n', env: { TF_INPUT: '1' } })
      expect(init.code, init.stderr).toBe(0)
      expect((await tf.run(['workspace', 'new', 'green'])).code).toBe(0)
      const list = await tf.run(['workspace', 'list'])
      expect(list.stdout).toMatch(/blue/)
      expect(list.stdout).toMatch(/\* green/)
      expect((await tf.run(['workspace', 'select', 'blue'])).code).toBe(0)
      const apply = await tf.run(['apply', '-auto-approve', '-input=false'])
      expect(apply.code, apply.stderr).toBe(0)
      expect((await api('/units/blue')).json()).toMatchObject({
        tags: ['app', 'tagged'],
        version_count: 1,
      })
      expect((await tf.run(['workspace', 'delete', 'green'])).code).toBe(0)
      expect((await api('/units/green')).status).toBe(404)
      expect((await tf.run(['workspace', 'list'])).stdout).not.toContain('green')
    })

    it('lets CI init without input on a workspace made beforehand as a unit with the tags (docs/terraform-cloud.md)', async () => {
      const made = await api('/units', {
        method: 'POST',
        body: JSON.stringify({ id: 'app-prod', tags: ['app', 'ci'] }),
      })
      expect(made.status).toBe(201)
      const ci = await workspace()
      try {
        await ci.write('main.tf', cloudConfig(hostname, 'tags = ["app", "ci"]'))
        const init = await ci.run(['init', '-input=false'], { env: { TF_WORKSPACE: 'app-prod' } })
        expect(init.code, init.stderr).toBe(0)
        const apply = await ci.run(['apply', '-auto-approve', '-input=false'], {
          env: { TF_WORKSPACE: 'app-prod' },
        })
        expect(apply.code, apply.stderr).toBe(0)
        expect((await api('/units/app-prod')).json()).toMatchObject({ version_count: 1 })
      } finally {
        await ci.dispose()
      }
    })
  })

  it('refuses a wrong token with unauthorized', async () => {
    const tf = await TerraformWorkspace.create({
      SSL_CERT_FILE: tls.caPath,
      [`TF_TOKEN_${hostname}`]: `svc_tfe_${'x'.repeat(43)}`,
    })
    try {
      await tf.write('main.tf', cloudConfig(hostname, 'name = "denied"'))
      const init = await tf.run(['init', '-input=false'])
      expect(init.code).not.toBe(0)
      expect(init.stderr.toLowerCase()).toContain('unauthorized')
      expect((await api('/units/denied')).status).toBe(404)
    } finally {
      await tf.dispose()
    }
  })
})
