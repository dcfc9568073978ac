import {
  allowAll,
  bodyOf,
  collectBytes,
  createCore,
  createMemoryStore,
  parseUnitId,
  randomIds,
  RunConflictError,
  RunNotFoundError,
  type Authorizer,
  type Clock,
  type Principal,
} from '@cairn/core'
import { describe, expect, it } from 'vitest'
import { gzipSync } from 'node:zlib'
import type { AgentIdentity } from './agent-tokens'
import { RunService, type Job, type RunEvent } from './run-service'
import { runSettingsExtension } from './run-workspaces'

const ALICE: Principal = { subject: 'alice', groups: [], roles: [] }
const AGENT: AgentIdentity = { tokenId: 't1', name: 'build-1' }
const OTHER_AGENT: AgentIdentity = { tokenId: 't2', name: 'build-2' }

/** A clock the test moves. */
function testClock(): Clock & { advance(ms: number): void } {
  let now = Date.parse('2026-11-29T10:00:00Z')
  return {
    now: () => now,
    advance: (ms) => {
      now += ms
    },
  }
}

/** A configuration archive of one file, made by hand as a tar would be. */
function archiveOf(): Uint8Array {
  const header = Buffer.alloc(512)
  const body = Buffer.from('resource "terraform_data" "a" {}\n')
  header.write('main.tf', 0)
  header.write('0000644\0', 100)
  header.write('0000000\0', 108)
  header.write('0000000\0', 116)
  header.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124)
  header.write('00000000000\0', 136)
  header.write('        ', 148)
  header.write('0', 156)
  header.write('ustar\0', 257)
  header.write('00', 263)
  let sum = 0
  for (const byte of header) sum += byte
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  const padded = Buffer.concat([body, Buffer.alloc(512 - body.length)])
  return gzipSync(Buffer.concat([header, padded, Buffer.alloc(1024)]))
}

async function setUp(options: { authorizer?: Authorizer; heartbeatTimeoutMs?: number } = {}) {
  const store = createMemoryStore()
  const clock = testClock()
  const core = createCore({
    store,
    authorizer: options.authorizer ?? allowAll,
    clock,
    extensions: [runSettingsExtension(store)],
  })
  const events: RunEvent[] = []
  const runs = new RunService({
    core,
    store,
    clock,
    ids: randomIds,
    heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 60_000,
    onEvent: (event) => events.push(event),
  })
  const { id: upload } = await runs.uploadConfig(archiveOf())
  const submit = (unit: string, operation: 'plan' | 'apply' | 'destroy' = 'apply', extra = {}) =>
    runs.submit(ALICE, { unit, operation, source: { upload }, ...extra })
  return { store, clock, core, runs, events, submit, upload }
}

describe('RunService', () => {
  it('queues runs, hands each unit one at a time in order, and takes the lock for an apply', async () => {
    const { runs, core, submit } = await setUp()
    const first = await submit('team/app')
    const second = await submit('team/app')
    const other = await submit('team/db', 'plan')
    expect(first.status).toBe('queued')
    expect((await runs.get(ALICE, second.id)).queue).toEqual({
      position: 2,
      reason: `waiting for run ${first.id} of the same unit to end`,
    })
    const claimed = (await runs.claim(AGENT)) as Job
    expect(claimed.id).toBe(first.id)
    const unit = await core.units.get(ALICE, parseUnitId('team/app'))
    expect(unit.lock?.Who).toBe(`run:${first.id}`)
    // The second run of team/app waits for the first; team/db's plan goes next.
    expect((await runs.claim(OTHER_AGENT))?.id).toBe(other.id)
    expect(await runs.claim(OTHER_AGENT)).toBeUndefined()
    await runs.finish(AGENT, first.id, { status: 'succeeded' })
    expect((await core.units.get(ALICE, parseUnitId('team/app'))).lock).toBeNull()
    expect((await runs.claim(OTHER_AGENT))?.id).toBe(second.id)
  })

  it('keeps a run queued, with the reason, while someone else holds the lock', async () => {
    const { runs, core, submit } = await setUp()
    await core.units.create(ALICE, parseUnitId('team/app'))
    const held = await core.locks.lock(
      ALICE,
      parseUnitId('team/app'),
      { Who: 'bob' },
      { source: 'api' },
    )
    const run = await submit('team/app')
    expect(await runs.claim(AGENT)).toBeUndefined()
    const waiting = await runs.get(ALICE, run.id)
    expect(waiting.status).toBe('queued')
    expect(waiting.phase).toBe('waiting_for_lock')
    expect(waiting.queue?.reason).toBe(`the unit is locked by bob (lock ${held.ID})`)
    await core.locks.unlock(ALICE, parseUnitId('team/app'), { lockId: held.ID, source: 'api' })
    expect((await runs.claim(AGENT))?.id).toBe(run.id)
  })

  it("splits the log where the plan ended: the plan's part, then the apply's once it begins", async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app')
    await runs.claim(AGENT)
    await runs.appendLog(AGENT, run.id, 0, 'init\n')
    await runs.appendLog(AGENT, run.id, 1, 'Plan: 1 to add\n')
    expect(await runs.readLogPart(run.id, 'plan', 0)).toMatchObject({ done: false })
    await runs.planned(AGENT, run.id, { add: 1, change: 0, destroy: 0 }, true, 2)
    const plan = await runs.readLogPart(run.id, 'plan', 0)
    expect(plan.bytes.toString()).toBe('init\nPlan: 1 to add\n')
    // Waiting for confirmation: the plan's part is whole, the apply's has not begun.
    expect(plan.done).toBe(true)
    expect(await runs.readLogPart(run.id, 'apply', 0)).toMatchObject({ done: false })
    await runs.confirm(ALICE, run.id)
    await runs.appendLog(AGENT, run.id, 2, 'Apply complete!\n')
    expect((await runs.readLogPart(run.id, 'plan', 5)).bytes.toString()).toBe('Plan: 1 to add\n')
    const apply = await runs.readLogPart(run.id, 'apply', 0)
    expect(apply.bytes.toString()).toBe('Apply complete!\n')
    expect(apply.done).toBe(false)
    await runs.finish(AGENT, run.id, { status: 'succeeded' })
    expect((await runs.readLogPart(run.id, 'apply', 6)).bytes.toString()).toBe('complete!\n')
    expect((await runs.readLogPart(run.id, 'apply', 0)).done).toBe(true)
  })

  it('discards a plan that waits for confirmation, and nothing else', async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app')
    await runs.claim(AGENT)
    await expect(runs.discard(ALICE, run.id)).rejects.toBeInstanceOf(RunConflictError)
    await runs.planned(AGENT, run.id, { add: 1, change: 0, destroy: 0 }, true, 0)
    await runs.discard(ALICE, run.id)
    expect(await runs.heartbeat(AGENT, run.id)).toMatchObject({ cancel: 'interrupt', apply: false })
    await expect(runs.confirm(ALICE, run.id)).rejects.toBeInstanceOf(RunConflictError)
    const ended = await runs.finish(AGENT, run.id, { status: 'canceled' })
    expect(ended).toMatchObject({ status: 'canceled', error: 'discarded by alice' })
    expect((await runs.record(ALICE, run.id)).discarded).toBe(true)
  })

  it('removes uploads no run took after a day, and keeps the one a waiting run needs', async () => {
    const { runs, clock, submit, upload } = await setUp()
    const { id: unused } = await runs.uploadConfig(archiveOf())
    const run = await submit('team/app')
    clock.advance(25 * 60 * 60_000)
    await runs.reconcile()
    expect(await runs.config(unused)).toBeUndefined()
    expect(await runs.config(upload)).toBeDefined()
    await runs.claim(AGENT)
    await runs.finish(AGENT, run.id, { status: 'succeeded' })
    // Swept at most once an hour on an instance.
    clock.advance(30 * 60_000)
    await runs.reconcile()
    expect(await runs.config(upload)).toBeDefined()
    clock.advance(31 * 60_000)
    await runs.reconcile()
    expect(await runs.config(upload)).toBeUndefined()
  })

  it("keeps a unit's execution mode until the unit is deleted, and refuses one for no unit", async () => {
    const { runs, core } = await setUp()
    const unit = parseUnitId('team/app')
    await expect(runs.workspaces.setExecutionMode(ALICE, unit, 'remote')).rejects.toMatchObject({
      code: 'unit_not_found',
    })
    await core.units.create(ALICE, unit)
    await expect(runs.workspaces.setExecutionMode(ALICE, unit, 'cloud')).rejects.toMatchObject({
      code: 'invalid_request',
    })
    await runs.workspaces.setExecutionMode(ALICE, unit, 'remote')
    expect(await runs.workspaces.executionMode(unit)).toBe('remote')
    await core.units.delete(ALICE, unit)
    await core.units.create(ALICE, unit)
    expect(await runs.workspaces.executionMode(unit)).toBe('local')
  })

  it('takes no lock for a plan', async () => {
    const { runs, core, submit } = await setUp()
    await core.units.create(ALICE, parseUnitId('team/app'))
    await core.locks.lock(ALICE, parseUnitId('team/app'), { Who: 'bob' }, { source: 'api' })
    const plan = await submit('team/app', 'plan')
    expect((await runs.claim(AGENT))?.id).toBe(plan.id)
  })

  it('cancels a queued run at once, and refuses a second cancel and a cancel of an ended run', async () => {
    const { runs, submit, events } = await setUp()
    const run = await submit('team/app')
    const canceled = await runs.cancel(ALICE, run.id)
    expect(canceled.status).toBe('canceled')
    expect(canceled.error).toBe('canceled by alice while queued')
    await expect(runs.cancel(ALICE, run.id)).rejects.toBeInstanceOf(RunConflictError)
    expect(await runs.claim(AGENT)).toBeUndefined()
    expect(events.map((event) => event.type)).toEqual(['run.created', 'run.canceled'])
  })

  it('interrupts a running run, kills it when forced, and refuses to ask twice without force', async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app')
    await runs.claim(AGENT)
    await runs.cancel(ALICE, run.id)
    expect((await runs.heartbeat(AGENT, run.id)).cancel).toBe('interrupt')
    await expect(runs.cancel(ALICE, run.id)).rejects.toThrow(/being canceled already/)
    await runs.cancel(ALICE, run.id, { force: true })
    expect((await runs.heartbeat(AGENT, run.id)).cancel).toBe('kill')
    const ended = await runs.finish(AGENT, run.id, { status: 'canceled' })
    expect(ended.status).toBe('canceled')
    expect(ended.error).toBe('canceled by alice')
  })

  it('waits for confirmation of a planned apply, and refuses to confirm a plan', async () => {
    const { runs, submit } = await setUp()
    const apply = await submit('team/app')
    const plan = await submit('team/db', 'plan')
    await runs.claim(AGENT)
    await runs.claim(AGENT)
    const waiting = await runs.planned(AGENT, apply.id, { add: 1, change: 0, destroy: 0 }, true)
    expect(waiting.apply).toBe(false)
    expect((await runs.get(ALICE, apply.id)).phase).toBe('planned')
    await runs.confirm(ALICE, apply.id)
    expect((await runs.heartbeat(AGENT, apply.id)).apply).toBe(true)
    await expect(runs.confirm(ALICE, apply.id)).rejects.toThrow(/not waiting for confirmation/)
    await expect(runs.confirm(ALICE, plan.id)).rejects.toThrow(/is a plan/)
  })

  it('goes straight to applying with auto_apply', async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app', 'apply', { auto_apply: true })
    await runs.claim(AGENT)
    expect((await runs.planned(AGENT, run.id, { add: 1, change: 0, destroy: 0 }, true)).apply).toBe(
      true,
    )
  })

  it('ends a run whose agent stopped heartbeating, and releases its lock', async () => {
    const { runs, core, clock, submit } = await setUp({ heartbeatTimeoutMs: 10_000 })
    const run = await submit('team/app')
    await runs.claim(AGENT)
    clock.advance(5_000)
    await runs.reconcile()
    expect((await runs.get(ALICE, run.id)).status).toBe('running')
    clock.advance(6_000)
    await runs.reconcile()
    const ended = await runs.get(ALICE, run.id)
    expect(ended.status).toBe('failed')
    expect(ended.error).toMatch(/agent build-1 stopped reporting/)
    expect((await core.units.get(ALICE, parseUnitId('team/app'))).lock).toBeNull()
    // The agent that comes back finds its run ended.
    expect((await runs.heartbeat(AGENT, run.id)).ended).toBe(true)
  })

  it('asks for the cancel of a run past its timeout, and ends it as failed', async () => {
    const { runs, clock, submit } = await setUp()
    const run = await submit('team/app', 'apply', { timeouts: { plan: 30 } })
    await runs.claim(AGENT)
    clock.advance(20_000)
    await runs.heartbeat(AGENT, run.id)
    clock.advance(20_000)
    await runs.reconcile()
    expect((await runs.heartbeat(AGENT, run.id)).cancel).toBe('interrupt')
    const ended = await runs.finish(AGENT, run.id, { status: 'canceled' })
    expect(ended.status).toBe('failed')
    expect(ended.error).toBe('the plan took longer than its timeout')
  })

  it('writes the state as the run, under its lock, with source run', async () => {
    const { runs, core, submit } = await setUp()
    const run = await submit('team/app')
    await runs.claim(AGENT)
    const state = JSON.stringify({
      version: 4,
      serial: 1,
      lineage: 'l-1',
      resources: [],
      outputs: {},
    })
    const version = await runs.writeState(AGENT, run.id, bodyOf(Buffer.from(state)))
    const versions = await core.versions.list(ALICE, parseUnitId('team/app'))
    expect(versions.items[0]).toMatchObject({
      timestamp: version,
      source: 'run',
      author: `run:${run.id}`,
    })
    // Someone else cannot write while the run holds the lock.
    await expect(
      core.states.write(ALICE, parseUnitId('team/app'), bodyOf(Buffer.from(state)), {
        source: 'api',
      }),
    ).rejects.toThrow(/locked by/)
    const download = await runs.state(AGENT, run.id)
    expect(Buffer.from(await collectBytes(download as AsyncIterable<Uint8Array>)).toString()).toBe(
      state,
    )
  })

  it('marks the run state_diverged when its state cannot be written', async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app')
    await runs.claim(AGENT)
    await expect(
      runs.writeState(AGENT, run.id, bodyOf(Buffer.from('not a state'))),
    ).rejects.toThrow()
    const ended = await runs.finish(AGENT, run.id, { status: 'failed', error: 'x' })
    expect(ended.state_diverged).toBe(true)
  })

  it('shows a run only to its holder among agents, and to readers of its unit among people', async () => {
    const readsTeam: Authorizer = {
      can: (principal, permission, unit) =>
        principal.subject !== 'mallory' &&
        !(permission !== 'unit:read' && principal.subject === 'reader') &&
        unit.startsWith('team/'),
      isAdmin: () => false,
    }
    const { runs, submit } = await setUp({ authorizer: readsTeam })
    const run = await submit('team/app')
    await runs.claim(AGENT)
    await expect(runs.heartbeat(OTHER_AGENT, run.id)).rejects.toBeInstanceOf(RunNotFoundError)
    await expect(runs.get({ subject: 'mallory' }, run.id)).rejects.toBeInstanceOf(RunNotFoundError)
    await expect(runs.cancel({ subject: 'reader' }, run.id)).rejects.toThrow(
      /does not have unit:write/,
    )
    await expect(
      runs.submit(
        { subject: 'reader' },
        { unit: 'team/app', operation: 'apply', source: { upload: 'x' } },
      ),
    ).rejects.toThrow(/unit:write/)
    expect((await runs.list({ subject: 'mallory' }, {})).runs).toEqual([])
  })

  it('scrubs sensitive values from the log before it is stored, and reads it from any offset', async () => {
    const { runs, submit } = await setUp()
    const run = await submit('team/app', 'apply', {
      variables: { password: { value: 'hunter22', sensitive: true }, name: { value: 'web' } },
      env: { TOKEN: { value: 'tok-secret', sensitive: true } },
    })
    await runs.claim(AGENT)
    await runs.appendLog(AGENT, run.id, 0, 'password is hunter22\n')
    await runs.appendLog(AGENT, run.id, 2, 'third\n')
    await runs.appendLog(AGENT, run.id, 1, 'token tok-secret for web\n')
    // A retried chunk is stored once.
    await runs.appendLog(AGENT, run.id, 1, 'something else\n')
    const whole = await runs.readLog(ALICE, run.id, 0)
    expect(whole.bytes.toString()).toBe('password is ***\ntoken *** for web\nthird\n')
    const rest = await runs.readLog(ALICE, run.id, whole.next - 'third\n'.length)
    expect(rest.bytes.toString()).toBe('third\n')
    const view = await runs.get(ALICE, run.id)
    expect(JSON.stringify(view)).not.toMatch(/hunter22|tok-secret/)
    expect(view.variables).toEqual(['password', 'name'])
  })

  it('refuses a bad submission, naming the field', async () => {
    const { runs, upload } = await setUp()
    const bad = [
      [{ unit: 'team/app', operation: 'deploy', source: { upload } }, /operation/],
      [{ unit: 'team/app', operation: 'plan', source: { upload: 'cv-nope' } }, /no configuration/],
      [
        { unit: 'team/app', operation: 'plan', source: { git: { url: 'https://x/y.git' } } },
        /not allowed/,
      ],
      [
        { unit: 'team/app', operation: 'plan', source: { upload }, env: { PATH: { value: '/' } } },
        /PATH/,
      ],
      [
        { unit: 'team/app', operation: 'plan', source: { upload }, timeouts: { plan: 0 } },
        /timeouts.plan/,
      ],
      [{ unit: 'team/app', operation: 'plan', source: { upload }, extra: 1 }, /extra/],
    ] as const
    for (const [body, message] of bad) {
      await expect(runs.submit(ALICE, body)).rejects.toThrow(message)
    }
    expect((await runs.list(ALICE, {})).runs).toEqual([])
  })

  it('never runs two runs of one unit at once, and ends every run, with three agents and twenty runs over five units', async () => {
    const { runs, submit } = await setUp()
    const units = ['a/1', 'a/2', 'a/3', 'a/4', 'a/5']
    const submitted: string[] = []
    for (let index = 0; index < 20; index += 1) {
      submitted.push((await submit(units[index % 5] as string)).id)
    }
    const running = new Set<string>()
    const order = new Map<string, string[]>()
    const agents = [AGENT, OTHER_AGENT, { tokenId: 't3', name: 'build-3' }]
    await Promise.all(
      agents.map(async (agent) => {
        for (;;) {
          const job = await runs.claim(agent)
          if (job === undefined) {
            if ((await runs.runs.active()).length === 0) return
            await new Promise((done) => setTimeout(done, 5))
            continue
          }
          expect(running.has(job.unit)).toBe(false)
          running.add(job.unit)
          order.set(job.unit, [...(order.get(job.unit) ?? []), job.id])
          await new Promise((done) => setTimeout(done, 2))
          running.delete(job.unit)
          await runs.finish(agent, job.id, { status: 'succeeded' })
        }
      }),
    )
    for (const id of submitted) expect((await runs.get(ALICE, id)).status).toBe('succeeded')
    for (const [unit, ids] of order) {
      expect(ids).toEqual(submitted.filter((_, index) => units[index % 5] === unit))
    }
  })
})
