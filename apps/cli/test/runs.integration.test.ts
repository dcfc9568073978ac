import { execFile, type ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Run } from '@cairn/sdk'
import {
  fetchAs,
  freePort,
  startServer,
  terraformBinary,
  waitFor,
  type RunningServer,
} from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

/** What the runs' configurations hold: a resource, a sensitive variable, a provisioner that prints. */
const CONFIG = `
variable "greeting" {
  type = string
}
variable "password" {
  type      = string
  sensitive = true
}
resource "terraform_data" "hello" {
  input = var.greeting
  provisioner "local-exec" {
    command = "echo greeting is $GREETING; echo password is $PASSWORD_ENV"
    environment = {
      GREETING = var.greeting
    }
  }
}
output "greeting" {
  value = terraform_data.hello.output
}
`

/** A configuration whose apply sleeps: to cancel it, or to kill its agent under it. */
const SLOW = `
resource "terraform_data" "slow" {
  input = timestamp()
  provisioner "local-exec" {
    command = "echo sleeping; sleep 60; echo woke"
  }
}
`

/** A configuration whose apply takes a few seconds: to restart the server under it. */
const PAUSE = `
resource "terraform_data" "pause" {
  provisioner "local-exec" {
    command = "echo pausing; sleep 3; echo resumed"
  }
}
`

const PASSWORD = 'pw-7c1e0d5a-never-shown'
const ENV_SECRET = 'env-4b9e11c2-never-shown'

describe('remote runs: cairn run and cairn agent against a server with -runs', () => {
  let server: RunningServer
  let port: number
  let dataDir: string
  let token: string
  let user: CliUser
  let agentToken: string
  let work: string
  const agents: ChildProcess[] = []
  let receiver: Server
  /** The webhook deliveries the receiver got, as sent. */
  const delivered: string[] = []

  const cairn = (args: string[], timeoutMs = 90_000) =>
    user.run([...args, '--server', server.url], { timeoutMs })
  const api = (path: string, init: RequestInit = {}) => fetchAs(server, path, token, init)
  const runOf = async (id: string): Promise<Run> =>
    (await (await api(`/v1/runs/${id}`)).json()) as Run
  const unitOf = async (id: string) =>
    (await (await api(`/v1/units/${id}`)).json()) as { locked: boolean; serial: number | null }

  const startAgent = (): ChildProcess => {
    const agent = user.spawn(
      ['agent', '--server', server.url, '--terraform', terraformBinary(), '--cancel-grace', '5'],
      {
        env: { CAIRN_AGENT_TOKEN: agentToken },
      },
    )
    agent.stdout?.resume()
    agent.stderr?.resume()
    agents.push(agent)
    return agent
  }
  const start = async () => {
    server = await startServer({
      auth: true,
      dataDir,
      args: [
        '-port',
        String(port),
        '-runs',
        '-runs-heartbeat-timeout',
        '5s',
        '-runs-git-allowed',
        `file://${work}/`,
        '-webhook-allowed-hosts',
        '127.0.0.1',
      ],
    })
  }

  beforeAll(async () => {
    port = await freePort()
    dataDir = await mkdtemp(join(tmpdir(), 'cairn-runs-data-'))
    work = await mkdtemp(join(tmpdir(), 'cairn-runs-work-'))
    await start()
    token = (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
    user = await CliUser.create()
    const login = await user.run(['login', '--server', server.url, '--token-stdin'], {
      input: `${token}\n`,
    })
    expect(login.code, login.stderr).toBe(0)
    const created = await cairn(['agent-tokens', 'create', 'build-1', '--json'])
    expect(created.code, created.stderr).toBe(0)
    agentToken = (JSON.parse(created.stdout) as { token: string }).token
    for (const [name, text] of [
      ['hello', CONFIG],
      ['slow', SLOW],
      ['pause', PAUSE],
    ] as const) {
      await mkdir(join(work, name))
      await writeFile(join(work, name, 'main.tf'), text)
    }
    startAgent()
    receiver = createServer((request, response) => {
      let body = ''
      request.setEncoding('utf8').on('data', (text: string) => (body += text))
      request.on('end', () => {
        delivered.push(body)
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const hook = await api('/v1/webhooks', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${String((receiver.address() as AddressInfo).port)}/hook`,
        events: ['run.created', 'run.planned', 'run.completed', 'run.canceled'],
        prefix: 'team/app',
      }),
    })
    expect(hook.status).toBe(201)
  })

  afterAll(async () => {
    receiver.close()
    for (const agent of agents) agent.kill('SIGKILL')
    await server.dispose()
    await rm(dataDir, { recursive: true, force: true })
    await rm(work, { recursive: true, force: true })
    await user.dispose()
  })

  it('plans, then applies with the state written as the run, streaming the log with secrets scrubbed', async () => {
    const vars = [
      '--var',
      'greeting=hello',
      '--sensitive-var',
      `password=${PASSWORD}`,
      '--sensitive-env',
      `PASSWORD_ENV=${ENV_SECRET}`,
    ]
    const plan = await cairn(['run', 'plan', 'team/app', '--dir', join(work, 'hello'), ...vars])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('Plan: 1 to add, 0 to change, 0 to destroy.')
    expect((await unitOf('team/app')).serial).toBeUndefined()

    const apply = await cairn([
      'run',
      'apply',
      'team/app',
      '--dir',
      join(work, 'hello'),
      '--auto-approve',
      ...vars,
    ])
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('greeting is hello')
    expect(apply.stdout).toContain('password is ***')
    expect(apply.stdout).toContain('Apply complete! Resources: 1 added')
    expect(apply.stdout).not.toContain(ENV_SECRET)

    const unit = (await (await api('/v1/units/team/app/versions')).json()) as {
      versions: { source: string; author: string }[]
    }
    expect(unit.versions[0]?.source).toBe('run')
    expect(unit.versions[0]?.author).toMatch(/^run:run-/)
    expect((await unitOf('team/app')).locked).toBe(false)

    const listed = await cairn(['run', 'ls', '--unit', 'team/app', '--json'])
    const runs = (JSON.parse(listed.stdout) as { runs: Run[] }).runs
    expect(runs.map((run) => [run.operation, run.status])).toEqual([
      ['apply', 'succeeded'],
      ['plan', 'succeeded'],
    ])
    // Nowhere a person or a webhook can look: the answers, the logs, the audit trail.
    const logs = await cairn(['run', 'logs', runs[0]?.id ?? ''])
    expect(logs.stdout).toContain('password is ***')
    const audit = await (await api('/v1/audit?limit=200')).text()
    expect(audit).toContain('run.create')
    // The webhook subscribed to team/app's runs hears of both, from creation to end.
    const events = await waitFor(
      'the runs webhook events',
      () => {
        const types = delivered.map((body) => (JSON.parse(body) as { type: string }).type)
        return types.filter((type) => type === 'run.completed').length >= 2 ? types : undefined
      },
      30_000,
      100,
    )
    expect(events.filter((type) => type === 'run.created')).toHaveLength(2)
    expect(events).toContain('run.planned')
    const completed = delivered
      .map(
        (body) => JSON.parse(body) as { type: string; run?: { operation: string; status: string } },
      )
      .filter((event) => event.type === 'run.completed')
      .map((event) => `${event.run?.operation ?? ''} ${event.run?.status ?? ''}`)
    expect(completed.sort()).toEqual(['apply succeeded', 'plan succeeded'])
    for (const text of [listed.stdout, logs.stdout, audit, delivered.join('\n')]) {
      expect(text).not.toContain(PASSWORD)
      expect(text).not.toContain(ENV_SECRET)
    }
  })

  it('ends the run of an agent killed mid-apply within the heartbeat timeout, and releases the lock', async () => {
    const id = await applyUntil('team/killed', 'slow', 'sleeping')
    const agent = agents.at(-1) as ChildProcess
    agent.kill('SIGKILL')
    await waitFor('the run to fail', async () => (await runOf(id)).status === 'failed', 30_000, 250)
    expect((await runOf(id)).error).toMatch(/stopped reporting/)
    expect((await unitOf('team/killed')).locked).toBe(false)
    startAgent()
  })

  it('keeps a run and its log through a kill -9 of the server, and ends it once it is back', async () => {
    const id = await applyUntil('team/restart', 'pause', 'pausing')
    // Terraform sleeps on the agent while the server is gone, and the agent keeps trying.
    await server.stop('SIGKILL')
    await start()
    await waitFor('the run to end', async () => (await runOf(id)).finished !== null, 60_000, 250)
    const run = await runOf(id)
    expect(run.status, run.error ?? '').toBe('succeeded')
    const log = await readLog(id)
    expect(log).toContain('pausing')
    expect(log).toContain('Apply complete!')
    expect((await unitOf('team/restart')).locked).toBe(false)
  })

  it('plans a configuration from a git repository the server allows, and refuses one it does not', async () => {
    const repo = join(work, 'repo')
    await mkdir(join(repo, 'stacks', 'web'), { recursive: true })
    await writeFile(
      join(repo, 'stacks', 'web', 'main.tf'),
      'resource "terraform_data" "from_git" {}\n',
    )
    const git = (...args: string[]) => execGit(repo, args)
    await git('init', '--quiet', '--initial-branch', 'main')
    await git('add', '.')
    await git(
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '--quiet',
      '-m',
      'web',
    )
    const plan = await cairn([
      'run',
      'plan',
      'team/git',
      '--git-url',
      `file://${repo}`,
      '--git-ref',
      'main',
      '--git-path',
      'stacks/web',
    ])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('terraform_data.from_git will be created')
    const refused = await cairn([
      'run',
      'plan',
      'team/git',
      '--git-url',
      'https://example.com/x.git',
    ])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('is not allowed here')
  })

  it('cancels the run it follows on Ctrl-C: Terraform is interrupted, its partial state kept, the lock released', async () => {
    const child = user.spawn([
      'run',
      'apply',
      'team/interrupted',
      '--dir',
      join(work, 'slow'),
      '--auto-approve',
      '--server',
      server.url,
    ])
    let stdout = ''
    let stderr = ''
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (stdout += text))
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await waitFor('the apply to print', () => stdout.includes('sleeping'), 60_000, 100)
    child.kill('SIGINT')
    expect(await exited).toBe(1)
    expect(stderr).toContain('Canceling run')
    const id = /run (run-\w+) canceled/.exec(stderr)?.[1] ?? ''
    // Terraform stopped gracefully: the resource it was creating is in the state it left.
    const unit = await unitOf('team/interrupted')
    expect(unit.locked).toBe(false)
    expect(unit.serial).toEqual(expect.any(Number))
    const again = await cairn(['run', 'cancel', id])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('has ended (canceled)')
  })

  it('sets where the cloud block runs a unit: cairn unit edit --execution-mode', async () => {
    const missing = await cairn(['unit', 'edit', 'team/remote', '--execution-mode', 'remote'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('team/remote')
    expect((await cairn(['unit', 'create', 'team/remote'])).code).toBe(0)
    const set = await cairn(['unit', 'edit', 'team/remote', '--execution-mode', 'remote'])
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toContain('plans and applies it on Cairn')
    const settings = await api('/v1/runs/settings?unit=team/remote')
    expect(await settings.json()).toEqual({ unit: 'team/remote', execution_mode: 'remote' })
    const wrong = await cairn(['unit', 'edit', 'team/remote', '--execution-mode', 'cloud'])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain('--execution-mode must be one of local, remote, agent')
    const back = await cairn(['unit', 'edit', 'team/remote', '--execution-mode', 'local', '--json'])
    expect(JSON.parse(back.stdout)).toEqual({ unit: 'team/remote', execution_mode: 'local' })
  })

  it('stops an agent whose token is revoked, saying so', async () => {
    const made = await cairn(['agent-tokens', 'create', 'short-lived', '--json'])
    const { id, token: shortLived } = JSON.parse(made.stdout) as { id: string; token: string }
    const agent = user.spawn(['agent', '--server', server.url], {
      env: { CAIRN_AGENT_TOKEN: shortLived },
    })
    let stderr = ''
    agent.stderr?.setEncoding('utf8').on('data', (text: string) => (stderr += text))
    const exited = new Promise<number | null>((resolve) => agent.on('close', resolve))
    await waitFor(
      'the agent to wait for runs',
      () => stderr.includes('waiting for runs'),
      30_000,
      100,
    )
    const revoked = await cairn(['agent-tokens', 'rm', id, '--yes'])
    expect(revoked.code, revoked.stderr).toBe(0)
    // Its long poll ends within 20 s; the next one is refused.
    expect(await exited).toBe(1)
    expect(stderr).toContain('the server refused the agent token')
  })

  it('refuses bad input and the wrong tokens, changing nothing', async () => {
    const notGzip = await api('/v1/runs/uploads', { method: 'POST', body: 'plain text' })
    expect(notGzip.status).toBe(400)
    expect(await notGzip.text()).toContain('not gzip-compressed')
    const huge = await api('/v1/runs/uploads', {
      method: 'POST',
      body: Buffer.alloc(11 * 1024 * 1024),
    })
    expect(huge.status).toBe(413)
    // An agent token opens the agents' routes only, and an API token never opens them.
    expect((await fetchAs(server, '/v1/units', agentToken)).status).toBe(401)
    expect((await fetchAs(server, '/v1/agent/jobs', token, { method: 'POST' })).status).toBe(401)
    const confirmPlan = await cairn(['run', 'ls', '--status', 'succeeded', '--json'])
    const plan = (JSON.parse(confirmPlan.stdout) as { runs: Run[] }).runs.find(
      (run) => run.operation === 'plan',
    )
    const confirm = await cairn(['run', 'confirm', plan?.id ?? ''])
    expect(confirm.code).toBe(1)
    expect(confirm.stderr).toContain('is a plan: it has nothing to apply')
  })

  /** Starts an apply of a configuration, detached; answers its ID once its log says `line`. */
  async function applyUntil(unit: string, config: string, line: string): Promise<string> {
    const started = await cairn([
      'run',
      'apply',
      unit,
      '--dir',
      join(work, config),
      '--auto-approve',
      '--detach',
    ])
    expect(started.code, started.stderr).toBe(0)
    const id = started.stdout.trim()
    await waitFor(
      `run ${id} to print ${line}`,
      async () => (await readLog(id)).includes(line),
      60_000,
      250,
    )
    return id
  }

  async function readLog(id: string): Promise<string> {
    return (await api(`/v1/runs/${id}/logs`)).text()
  }
})

function execGit(cwd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: { PATH: process.env['PATH'] ?? '', HOME: cwd } }, (error) => {
      if (error === null) resolve()
      else reject(new Error(`git ${args.join(' ')} failed: ${error.message}`))
    })
  })
}
