import { describe, expect, it } from 'vitest'
import {
  expectWorkspaceDocument,
  JSON_API,
  LINEAGE,
  md5,
  setup,
  workspaceBody,
  type Answer,
} from '../../test/harness'

// What `terraform_remote_state` reads through the `cloud` or `remote` backend, for a caller who
// may read a unit's outputs and not its state: the workspace, `current-state-version`, then the
// `hosted-state-download-url` (terraform-wire.md A3). Workspace team__net is unit team/net.
const NAME = 'team__net'
const WS = `ws-${NAME}`

/** Names and values of the state's resources: none of them may reach an outputs-only caller. */
const HIDDEN = ['secret_vault', 'instance-7f3a', 'root-private-key', 'terraform_data', 'provider']

/** A state as Terraform writes it, with outputs of each kind and a resource to keep hidden. */
function upstreamState(serial: number): string {
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage: LINEAGE,
      outputs: {
        vpc_id: { value: `vpc-${serial}`, type: 'string' },
        subnets: { value: ['subnet-a', 'subnet-b'], type: ['list', 'string'] },
        settings: {
          value: { az: 'a', size: 3 },
          type: ['object', { az: 'string', size: 'number' }],
        },
        db_password: { value: 'hunter2', type: 'string', sensitive: true },
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
              attributes: { id: 'instance-7f3a', input: 'root-private-key', output: null },
              sensitive_attributes: [],
            },
          ],
        },
      ],
      check_results: null,
    },
    null,
    2,
  )}\n`
}

/** RBAC on; alice wrote team__net at serial 1; bob holds `role` on it, if any. */
async function upstream(role?: string) {
  const h = setup({ rbac: true })
  await h.workspace(NAME, workspaceBody(NAME))
  const write = async (serial: number) => {
    expect((await h.lock(WS)).status).toBe(200)
    await h.push(WS, upstreamState(serial))
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
  }
  await write(1)
  if (role !== undefined) await h.grant('user:bob', role, 'team/net')
  return {
    ...h,
    write,
    bob: (method: string, path: string) => h.api(method, path, { token: 'bob' }),
    alice: (method: string, path: string) => h.api(method, path),
  }
}
type Upstream = Awaited<ReturnType<typeof upstream>>

/** Terraform's reads: the workspace, its current state version, then that version's download. */
async function remoteStateRead(h: Upstream, as: 'bob' | 'alice') {
  const workspace = await h[as]('GET', `/organizations/acme/workspaces/${NAME}`)
  expect(workspace.status, workspace.text).toBe(200)
  expectWorkspaceDocument(workspace.one(), NAME)
  const current = await h[as]('GET', `/workspaces/${workspace.one().id}/current-state-version`)
  expect(current.status, current.text).toBe(200)
  expect(current.headers.get('content-type')).toBe(JSON_API)
  const url = String(current.one().attributes['hosted-state-download-url'])
  const download = await h.request('GET', url, { token: as === 'bob' ? 'bob' : 'good' })
  expect(download.status, download.text).toBe(200)
  return { current: current.one(), download }
}

function expectRefusedRead(answer: Answer): void {
  expect(answer.status, answer.text).toBe(403)
  expect(answer.error()).toMatchObject({ status: '403', title: 'forbidden' })
  expect(answer.error().detail).toContain('bob does not have unit:read on team/net')
}

describe('an outputs-only caller reading state as terraform_remote_state does', () => {
  it('downloads a state of the same serial, lineage and outputs, with no resources', async () => {
    const h = await upstream('outputs-reader')
    const { download } = await remoteStateRead(h, 'bob')
    expect(download.headers.get('content-type')).toBe('application/json')
    expect(download.headers.get('content-length')).toBe(String(download.bytes.byteLength))
    const stored = JSON.parse(upstreamState(1)) as Record<string, unknown>
    expect(JSON.parse(download.text)).toEqual({
      version: 4,
      terraform_version: '1.11.4',
      serial: 1,
      lineage: LINEAGE,
      outputs: stored['outputs'],
      resources: [],
      check_results: null,
    })
    for (const hidden of HIDDEN) expect(download.text).not.toContain(hidden)
  })

  it('is told the same state version as a reader, with the md5 and size of what it downloads', async () => {
    const h = await upstream('outputs-reader')
    const { current, download } = await remoteStateRead(h, 'bob')
    const real = await remoteStateRead(h, 'alice')
    expect(current.id).toBe(real.current.id)
    for (const field of ['serial', 'lineage', 'created-at', 'status', 'state-version']) {
      expect(current.attributes[field], field).toEqual(real.current.attributes[field])
    }
    expect(current.attributes.md5).toBe(md5(download.bytes))
    expect(current.attributes['size']).toBe(download.bytes.byteLength)
    expect(current.attributes.md5).not.toBe(real.current.attributes.md5)
    // A state version read by its ID says the same.
    const byId = await h.bob('GET', `/state-versions/${current.id}`)
    expect(byId.status, byId.text).toBe(200)
    expect(byId.one().attributes).toEqual(current.attributes)
  })

  it('follows the upstream: after a new write, the view is of the new version', async () => {
    const h = await upstream('outputs-reader')
    await h.write(2)
    const { download } = await remoteStateRead(h, 'bob')
    expect(JSON.parse(download.text)).toMatchObject({
      serial: 2,
      outputs: { vpc_id: { value: 'vpc-2' } },
    })
  })

  it('is refused a version that is no longer the current one, even the one it was just shown', async () => {
    const h = await upstream('outputs-reader')
    const first = (await h.bob('GET', `/workspaces/${WS}/current-state-version`)).one()
    await h.write(2)
    expectRefusedRead(
      await h.request('GET', String(first.attributes['hosted-state-download-url']), {
        token: 'bob',
      }),
    )
    expectRefusedRead(await h.bob('GET', `/state-versions/${first.id}`))
    expectRefusedRead(await h.bob('GET', `/state-versions?filter[workspace][name]=${NAME}`))
  })

  it('answers 404 for a workspace without state, as Terraform reads "no state"', async () => {
    const h = await upstream('outputs-reader')
    await h.workspace('team__empty', workspaceBody('team__empty'))
    await h.grant('user:bob', 'outputs-reader', 'team/empty')
    const answer = await h.bob('GET', '/workspaces/ws-team__empty/current-state-version')
    expect(answer.status, answer.text).toBe(404)
  })

  it('is refused the current state version without unit:outputs, naming unit:read', async () => {
    const h = await upstream()
    expectRefusedRead(await h.bob('GET', `/workspaces/${WS}/current-state-version`))
  })
})

describe('a reader reading the same state', () => {
  it('downloads the real bytes, with their md5 and size', async () => {
    const h = await upstream('reader')
    const { current, download } = await remoteStateRead(h, 'bob')
    expect(download.text).toBe(upstreamState(1))
    expect(current.attributes.md5).toBe(md5(upstreamState(1)))
    expect(current.attributes['size']).toBe(download.bytes.byteLength)
  })
})

describe('a state that is not a Terraform state of format 4', () => {
  it('has no outputs-only view: the outputs-only caller is refused, naming unit:read', async () => {
    const h = await upstream('outputs-reader')
    expect((await h.lock(WS)).status).toBe(200)
    const old = { version: 3, serial: 2, lineage: LINEAGE, modules: [{ path: ['root'] }] }
    await h.push(WS, JSON.stringify(old))
    expect((await h.api('POST', `/workspaces/${WS}/actions/unlock`)).status).toBe(200)
    expectRefusedRead(await h.bob('GET', `/workspaces/${WS}/current-state-version`))
  })
})
