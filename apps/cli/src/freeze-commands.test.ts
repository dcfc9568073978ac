import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { CairnApiError } from '@cairn/sdk'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'

/**
 * `cairn freeze`, `cairn unfreeze` and `cairn freezes ls` as an administrator runs them, in
 * process, against the server app on a memory store with authentication off and RBAC on with
 * `anonymous` as an administrator.
 */

useCliHome('cairn-freeze-commands-')
let server: InProcessApp
let sent: string[]

beforeEach(async () => {
  sent = []
  server = await inProcessApp({ rbac: { enabled: true, admins: ['user:anonymous'] } })
  routeTo(server, sent)
})

afterEach(() => server.close())

interface FreezeJson {
  id: string
  prefix: string
  reason: string
  by: string
}

describe('cairn freeze', () => {
  it('prints the freeze ID, stops locks under the prefix, and unfreeze lifts it', async () => {
    await cairn('unit', 'create', 'team/app')
    const id = (await cairn('freeze', 'team/*', '--reason', 'release freeze')).trim()
    expect(id).toMatch(/^frz-[0-9a-f]+$/)
    expect(sent).toContain('POST /v1/freezes')

    const refused = await run('unit', 'lock', 'team/app')
    expect(refused.error).toBeInstanceOf(CairnApiError)
    expect((refused.error as CairnApiError).code).toBe('unit_frozen')
    expect((refused.error as CairnApiError).message).toBe(
      `team/app is frozen: release freeze (freeze ${id} by anonymous)`,
    )

    const listed = await cairn('freezes', 'ls')
    expect(listed.split('\n')[0]).toMatch(/^ID\s+PREFIX\s+CREATED\s+BY\s+REASON$/)
    expect(listed).toMatch(
      new RegExp(`^${id}\\s+team/\\*\\s+\\S+\\s+anonymous\\s+release freeze$`, 'm'),
    )

    expect(await cairn('unfreeze', id, '--yes')).toBe(`Lifted freeze ${id}.\n`)
    expect(await cairn('freezes', 'ls')).toBe('No freezes.\n')
    await cairn('unit', 'lock', 'team/app')
  })

  it('answers JSON with --json', async () => {
    const freeze = await json<FreezeJson>('freeze', '*', '--reason', 'migration')
    expect(freeze).toMatchObject({ prefix: '*', reason: 'migration', by: 'anonymous' })
    const { freezes } = await json<{ freezes: FreezeJson[] }>('freezes', 'ls')
    expect(freezes.map((item) => item.id)).toEqual([freeze.id])
  })

  it('fails with freeze_not_found to unfreeze an unknown ID', async () => {
    const result = await run('unfreeze', 'frz-none', '--yes')
    expect((result.error as CairnApiError).code).toBe('freeze_not_found')
  })
})
