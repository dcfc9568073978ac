import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packDirectory } from '@cairn/runs'
import { fetchAs, useServer, waitFor } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

describe('-runs-local-agent: one agent inside the server, for a trial', () => {
  const server = useServer({ auth: true, args: ['-runs', '-runs-local-agent'] })
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-local-agent-'))
    await mkdir(join(dir, 'config'))
    await writeFile(
      join(dir, 'config', 'main.tf'),
      'resource "terraform_data" "here" {\n  input = "local"\n}\n',
    )
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('applies a run with no agent of its own, and says so in the log', async () => {
    const as = (path: string, init: RequestInit = {}) => fetchAs(server, path, server.token, init)
    const upload = await as('/v1/runs/uploads', {
      method: 'POST',
      headers: { 'content-type': 'application/gzip' },
      body: await packDirectory(join(dir, 'config')),
    })
    expect(upload.status).toBe(201)
    const { id: config } = (await upload.json()) as { id: string }
    const created = await as('/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        unit: 'trial/app',
        operation: 'apply',
        source: { upload: config },
        auto_apply: true,
      }),
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const run = await waitFor(
      'the run to end',
      async () => {
        const current = (await (await as(`/v1/runs/${id}`)).json()) as {
          status: string
          agent: string | null
          finished: string | null
        }
        return current.finished === null ? undefined : current
      },
      60_000,
      250,
    )
    expect(run).toMatchObject({ status: 'succeeded', agent: 'local:server' })
    const log = await (await as(`/v1/runs/${id}/logs`)).text()
    expect(log).toContain('on agent local:server')
    expect(log).toContain('Apply complete! Resources: 1 added')
    expect(server.output()).toContain('the local agent runs configurations on this host')
  })
})
