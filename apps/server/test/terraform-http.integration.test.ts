import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TerraformWorkspace, useServer, waitFor } from '@cairn/testkit'

const UNIT = 'team/app/prod'

/** A configuration on the http backend with locking, as the README shows it. */
function configuration(url: string, input: string): string {
  const address = `${url}/v1/backend/${UNIT}`
  return `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
  }
}

resource "terraform_data" "network" {
  input = "${input}"
}

resource "terraform_data" "app" {
  input = terraform_data.network.output
}

output "network" {
  value = terraform_data.network.output
}
`
}

interface UnitBody {
  serial: number | null
  lineage: string | null
  version_count: number
  locked: boolean
  lock: { ID: string } | null
}

describe('Terraform with the http backend', () => {
  const server = useServer()
  let workspace: TerraformWorkspace
  const api = (path: string, init?: RequestInit) => fetch(`${server.url}/v1/units/${path}`, init)
  const unit = async () => (await (await api(UNIT)).json()) as UnitBody
  const lockElsewhere = async (who: string) => {
    const response = await api(`${UNIT}/lock`, {
      method: 'POST',
      body: JSON.stringify({ Who: who, Operation: 'maintenance' }),
    })
    expect(response.status).toBe(200)
    return ((await response.json()) as { ID: string }).ID
  }

  beforeAll(async () => {
    workspace = await TerraformWorkspace.create()
    await workspace.write('main.tf', configuration(server.url, 'v1'))
  })
  afterAll(async () => {
    await workspace.dispose()
  })

  it('initialises, applies and lists its resources, with the state stored as version 1', async () => {
    const init = await workspace.run(['init', '-input=false'])
    expect(init.code, init.stderr).toBe(0)
    const apply = await workspace.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('Apply complete! Resources: 2 added')

    const list = await workspace.run(['state', 'list'])
    expect(list.stdout.trim().split('\n')).toEqual(['terraform_data.app', 'terraform_data.network'])

    const stored = await unit()
    expect(stored).toMatchObject({ version_count: 1, locked: false })
    expect(stored.serial).toBeGreaterThan(0)
    const pulled = await workspace.run(['state', 'pull'])
    const downloaded = await (await api(`${UNIT}/download`)).text()
    expect(JSON.parse(downloaded)).toEqual(JSON.parse(pulled.stdout))
    expect(stored.lineage).toBe((JSON.parse(downloaded) as { lineage: string }).lineage)
  })

  it('adds a version with a higher serial on a second apply', async () => {
    const before = await unit()
    await workspace.write('main.tf', configuration(server.url, 'v2'))
    const apply = await workspace.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
    const after = await unit()
    expect(after.version_count).toBe(before.version_count + 1)
    expect(after.serial).toBeGreaterThan(before.serial ?? 0)
    expect(after.lineage).toBe(before.lineage)
    const output = await workspace.run(['output', '-raw', 'network'])
    expect(output.stdout).toBe('v2')
    const versions = (await (await api(`${UNIT}/versions`)).json()) as {
      versions: { source: string }[]
    }
    expect(versions.versions.map((version) => version.source)).toEqual(['http', 'http'])
  })

  it('fails apply -lock-timeout while the unit is locked elsewhere, naming the lock', async () => {
    const lockId = await lockElsewhere('ops@laptop')
    try {
      await workspace.write('main.tf', configuration(server.url, 'v3'))
      const apply = await workspace.run([
        'apply',
        '-auto-approve',
        '-input=false',
        '-lock-timeout=2s',
      ])
      expect(apply.code).not.toBe(0)
      // Terraform boxes and wraps its error text: compare with the frame and wrapping folded.
      const message = apply.stderr.replace(/[│\s]+/g, ' ')
      expect(message).toContain('Error acquiring the state lock')
      expect(message).toContain(`HTTP remote state already locked: ID=${lockId}`)
      expect((await unit()).lock?.ID).toBe(lockId)
    } finally {
      await api(`${UNIT}/unlock`, { method: 'DELETE', body: JSON.stringify({ ID: lockId }) })
    }
  })

  it('waits out a lock released within -lock-timeout and then applies', async () => {
    const lockId = await lockElsewhere('ops@laptop')
    const before = await unit()
    await workspace.write('main.tf', configuration(server.url, 'v4'))
    const running = workspace.run(['apply', '-auto-approve', '-input=false', '-lock-timeout=60s'])
    // Release the lock once Terraform has been refused at least once (the server logs each 423).
    await waitFor(
      'Terraform to be refused the lock once',
      () =>
        server.output().includes('"method":"LOCK","path":"/v1/backend/team/app/prod","status":423'),
      30_000,
    )
    const unlocked = await api(`${UNIT}/unlock`, {
      method: 'DELETE',
      body: JSON.stringify({ ID: lockId }),
    })
    expect(unlocked.status).toBe(200)
    const apply = await running
    expect(apply.code, apply.stderr).toBe(0)
    expect((await unit()).version_count).toBe(before.version_count + 1)
  })

  it('force-unlock releases a lock left behind, and the unit records it', async () => {
    const lockId = await lockElsewhere('crashed-runner')
    const force = await workspace.run(['force-unlock', '-force', lockId])
    expect(force.code, force.stderr).toBe(0)
    expect(force.stdout).toContain('Terraform state has been successfully unlocked!')
    expect((await unit()).locked).toBe(false)
    const history = (await (await api(`${UNIT}/history`)).json()) as {
      events: { type: string; lock: { ID: string } }[]
    }
    expect(history.events[0]).toMatchObject({ type: 'force_unlock', lock: { ID: lockId } })

    const apply = await workspace.run(['apply', '-auto-approve', '-input=false'])
    expect(apply.code, apply.stderr).toBe(0)
  })
})
