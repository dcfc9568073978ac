import { describe, expect, it } from 'vitest'
import type { Permission } from '../access/authorizer'
import type { Principal } from '../access/principal'
import { createCore } from '../core'
import { ForbiddenError, StateNotFoundError } from '../errors'
import { createMemoryStore } from '../storage/memory-store'
import { bytesOf } from '../testing/fixtures'
import { GrantTable } from '../testing/grant-table'
import { ManualClock } from '../testing/manual-clock'
import { parseUnitId } from '../units/unit-id'

const root: Principal = { subject: 'root' }
const carol: Principal = { subject: 'carol' }
const UNIT = parseUnitId('team/net')
const LINEAGE = '0f4e2b8c-5a3d-4c1e-9b7a-2d6f8e1c3a5b'

/** A state as Terraform 1.11 writes it, with a resource whose names must never reach carol. */
function stateText(serial: number): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: LINEAGE,
      outputs: {
        vpc_id: { value: 'vpc-0a1b2c', type: 'string' },
        subnets: { value: ['subnet-a', 'subnet-b'], type: ['list', 'string'] },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
        // A computed key: an own property named `__proto__`, as JSON.parse would make it.
        ['__proto__']: { value: 1, type: 'number' },
      },
      resources: [
        {
          mode: 'managed',
          type: 'terraform_data',
          name: 'secret_vault',
          provider: 'provider["terraform.io/builtin/terraform"]',
          instances: [
            {
              schema_version: 0,
              attributes: { id: 'instance-7f3a', input: 'root-private-key' },
              sensitive_attributes: [],
            },
          ],
        },
      ],
      check_results: [],
    },
    null,
    2,
  )}\n`
}

/** What RBAC's built-in roles grant, for the roles these tests give carol. */
const ROLES: Record<string, readonly Permission[]> = {
  reader: ['unit:read'],
  'outputs-reader': ['unit:outputs'],
  writer: ['unit:read', 'unit:write', 'unit:lock'],
}

/** root administers and wrote team/net twice; carol holds `role` on it. */
async function setup(role?: string) {
  const clock = new ManualClock()
  const access = new GrantTable(['root'])
  const core = Object.assign(
    createCore({ store: createMemoryStore(), clock, authorizer: access }),
    { access },
  )
  await core.units.create(root, UNIT)
  for (const serial of [1, 2]) {
    await core.states.write(root, UNIT, bytesOf(stateText(serial)), { source: 'api' })
    clock.advance(1000)
  }
  if (role !== undefined) access.grant('carol', ROLES[role] ?? [], 'team/net')
  return core
}

describe('the outputs-only view of a state', () => {
  it("holds the current version's header and outputs as stored, and nothing of its resources", async () => {
    const core = await setup('outputs-reader')
    const view = await core.versions.outputsView(carol, UNIT)
    const text = new TextDecoder().decode(view.body)
    const parsed = JSON.parse(text) as Record<string, unknown>
    expect(Object.keys(parsed)).toEqual([
      'version',
      'terraform_version',
      'serial',
      'lineage',
      'outputs',
      'resources',
      'check_results',
    ])
    expect(parsed).toMatchObject({
      version: 4,
      terraform_version: '1.11.4',
      serial: 2,
      lineage: LINEAGE,
      resources: [],
      check_results: null,
    })
    // As Terraform writes outputs: `sensitive` only when true, and every name, `__proto__` too.
    const stored = JSON.parse(stateText(2)) as Record<string, unknown>
    expect(JSON.stringify(parsed['outputs'])).toBe(JSON.stringify(stored['outputs']))
    expect(text).toContain('"__proto__": {')
    expect(text).toContain('"sensitive": true')
    for (const hidden of ['secret_vault', 'instance-7f3a', 'root-private-key', 'terraform_data']) {
      expect(text).not.toContain(hidden)
    }
    const current = (await core.versions.list(root, UNIT, { limit: 1 })).items[0]
    expect(view.version).toEqual(current)
  })

  it('is given to a reader as well, since reading implies reading outputs', async () => {
    const core = await setup('reader')
    expect((await core.versions.outputsView(carol, UNIT)).version.serial).toBe(2)
  })

  it('is refused to a caller without unit:outputs', async () => {
    const core = await setup()
    await expect(core.versions.outputsView(carol, UNIT)).rejects.toThrow(
      new ForbiddenError('carol does not have unit:outputs on team/net'),
    )
  })

  it('answers state_not_found for a unit without state', async () => {
    const core = await setup('outputs-reader')
    const empty = parseUnitId('team/empty')
    await core.units.create(root, empty)
    core.access.grant('carol', ['unit:outputs'], 'team/empty')
    await expect(core.versions.outputsView(carol, empty)).rejects.toBeInstanceOf(StateNotFoundError)
  })

  it('refuses a state that is not a Terraform state of format 4: there is no view to give', async () => {
    const core = await setup('outputs-reader')
    await core.states.write(root, UNIT, bytesOf('{"anything": ["but", "a", "state"]}'), {
      source: 'api',
    })
    await expect(core.versions.outputsView(carol, UNIT)).rejects.toBeInstanceOf(ForbiddenError)
    await expect(core.versions.outputsView(carol, UNIT)).rejects.toThrow(/unit:read on team\/net/)
  })
})
