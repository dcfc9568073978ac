// What a remote run costs: `cairn run apply` of a configuration through a Cairn server and one
// `cairn agent` on this machine, against `terraform apply` of the same configuration run locally
// in the same run; and how long a line Terraform prints takes to reach the follower of the log.
// See bench/README.md.
import { mkdir, writeFile } from 'node:fs/promises'
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { BenchError } from '../harness/bench-error'
import { defineBench } from '../harness/bench-definition'
import { makeTemporaryDir, removeTemporaryDir, track } from '../harness/cleanup'
import type { FlagValues } from '../harness/flags'
import { fmtMs, fmtRatio } from '../harness/format'
import { cliMain } from '../harness/paths'
import { progress } from '../harness/progress'
import type { BenchReport } from '../harness/report'
import {
  localServerArgs,
  readAdminToken,
  startServer,
  stopCleanly,
} from '../harness/server-process'
import { median, percentile } from '../harness/stats'

const flags = {
  resources: {
    kind: 'whole',
    default: 20,
    min: 1,
    max: 2000,
    help: 'terraform_data resources in the configuration, each changed by every apply',
  },
  rounds: { kind: 'whole', default: 7, min: 1, max: 100, help: 'measured applies of each kind' },
} as const

type Values = FlagValues<typeof flags>

/**
 * The configuration: `count` resources whose input is the round, so every apply changes each, and
 * one resource replaced every round whose provisioner prints the time in milliseconds.
 */
function configuration(count: number): string {
  return `variable "round" {
  type = number
}

resource "terraform_data" "item" {
  count = ${String(count)}
  input = "round \${var.round}, item \${count.index}"
}

resource "terraform_data" "mark" {
  triggers_replace = var.round
  provisioner "local-exec" {
    command = "echo mark=$(date +%s%3N)"
  }
}
`
}

interface Timed {
  ms: number
  /** For each `mark=<ms>` line seen on stdout: when it arrived, less the time it names. */
  latencies: number[]
}

/** Runs a command to its end; its time, and the latency of each mark line it printed. */
function timed(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
    const forget = track({ stop: () => Promise.resolve(), kill: () => child.kill('SIGKILL') })
    const latencies: number[] = []
    let output = ''
    let pending = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      const now = Date.now()
      output += text
      pending += text
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        const mark = /mark=(\d{13})/.exec(line)
        if (mark !== null) latencies.push(now - Number(mark[1]))
      }
    })
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.on('error', (error) => {
      forget()
      reject(new BenchError(`cannot run ${command}: ${error.message}`))
    })
    child.on('close', (code) => {
      forget()
      if (code !== 0) {
        reject(new BenchError(`${command} ${args.join(' ')} failed (${String(code)}):\n${output}`))
        return
      }
      resolve({ ms: performance.now() - started, latencies })
    })
  })
}

async function measure(values: Values) {
  const dir = await makeTemporaryDir('cairn-bench-runs-')
  const home = join(dir, 'home')
  const local = join(dir, 'local')
  const remote = join(dir, 'remote')
  for (const path of [home, local, remote]) await mkdir(path, { recursive: true })
  await writeFile(join(home, '.terraformrc'), '')
  for (const path of [local, remote]) {
    await writeFile(join(path, 'main.tf'), configuration(values.resources))
  }
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    CHECKPOINT_DISABLE: '1',
    TF_IN_AUTOMATION: '1',
    TF_INPUT: '0',
    TF_CLI_CONFIG_FILE: join(home, '.terraformrc'),
    NO_COLOR: '1',
  }
  progress('starting Cairn with -runs, and an agent')
  const server = await startServer('Cairn', localServerArgs(join(dir, 'data'), '-runs'))
  const token = await readAdminToken(join(dir, 'data'))
  const made = await fetch(`${server.origin}/v1/agents/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  })
  if (made.status !== 201) throw new BenchError(`cannot make an agent token: ${made.status}`)
  const agentToken = ((await made.json()) as { token: string }).token
  const agent = spawn(process.execPath, [cliMain, 'agent', '--server', server.origin], {
    env: { ...env, CAIRN_AGENT_TOKEN: agentToken },
    stdio: ['ignore', 'ignore', 'ignore'],
  })
  const stopAgent = track({
    stop: () => Promise.resolve(),
    kill: () => agent.kill('SIGKILL'),
  })
  try {
    await timed('terraform', ['init', '-input=false', '-no-color'], { cwd: local, env })
    const cairnEnv = { ...env, CAIRN_TOKEN: token, SVC_SERVER_URL: server.origin }
    const run = (round: number) =>
      timed(
        process.execPath,
        [
          cliMain,
          'run',
          'apply',
          'bench/runs',
          '--dir',
          remote,
          '--auto-approve',
          '--var',
          `round=${String(round)}`,
        ],
        { cwd: remote, env: cairnEnv },
      )
    const apply = (round: number) =>
      timed(
        'terraform',
        ['apply', '-auto-approve', '-input=false', '-no-color', `-var=round=${String(round)}`],
        {
          cwd: local,
          env,
        },
      )
    // One of each not counted: the first apply creates everything.
    await run(0)
    await apply(0)
    const runs: Timed[] = []
    const applies: Timed[] = []
    for (let round = 1; round <= values.rounds; round += 1) {
      progress(`round ${String(round)} of ${String(values.rounds)}`)
      runs.push(await run(round))
      applies.push(await apply(round))
    }
    return { runs, applies }
  } finally {
    agent.kill('SIGTERM')
    stopAgent()
    await stopCleanly(server)
    await removeTemporaryDir(dir)
  }
}

function report(values: Values, measured: Awaited<ReturnType<typeof measure>>): BenchReport {
  const run = median(measured.runs.map(({ ms }) => ms))
  const local = median(measured.applies.map(({ ms }) => ms))
  const latencies = measured.runs.flatMap(({ latencies }) => latencies)
  const localLatencies = measured.applies.flatMap(({ latencies }) => latencies)
  const ms = (value: number) => `${fmtMs(value)} ms`
  return {
    title: 'Cairn remote runs benchmark: cairn run apply on an agent against terraform apply here',
    facts: [
      `${values.resources} terraform_data resources changed by every apply, and one replaced whose provisioner prints the time; medians of ${values.rounds} rounds after 1 not counted, alternating`,
      'Cairn: one server (local mode, fs store, -runs) and one cairn agent on this machine',
    ],
    tables: [
      {
        columns: ['figure', 'median', 'p90', 'max'],
        rows: [
          [
            'cairn run apply, whole command',
            ms(run),
            ms(
              percentile(
                measured.runs.map(({ ms }) => ms),
                90,
              ),
            ),
            ms(Math.max(...measured.runs.map(({ ms }) => ms))),
          ],
          [
            'terraform apply, here (baseline)',
            ms(local),
            ms(
              percentile(
                measured.applies.map(({ ms }) => ms),
                90,
              ),
            ),
            ms(Math.max(...measured.applies.map(({ ms }) => ms))),
          ],
          [
            'a log line, Terraform to the follower',
            ms(median(latencies)),
            ms(percentile(latencies, 90)),
            ms(Math.max(...latencies)),
          ],
          [
            'the same line printed here (baseline)',
            ms(median(localLatencies)),
            ms(percentile(localLatencies, 90)),
            ms(Math.max(...localLatencies)),
          ],
        ],
      },
    ],
    notes: [
      'cairn run apply: packs and uploads the directory, starts the run, follows its log to the end; the agent',
      '  claims it (a long poll), unpacks it, downloads the state, runs terraform init, plan, show and apply in a',
      '  fresh directory, writes the state back, and ends the run. The baseline applies in an initialised directory',
      '  with local state: what the overhead is measured against.',
      'a log line: the provisioner prints the time; the follower (cairn run apply) notes when the line reaches it.',
    ],
    figures: [
      {
        figure: `run apply of ${values.resources}, ms`,
        cairn: ms(run),
        baseline: ms(local),
        ratio: fmtRatio(run / local),
      },
      {
        figure: `run apply of ${values.resources}, overhead over the local apply, ms`,
        cairn: ms(run - local),
        baseline: '2000 ms (goal)',
        ratio: fmtRatio((run - local) / 2000),
      },
      {
        figure: 'a log line reaching the follower, ms',
        cairn: ms(median(latencies)),
        baseline: '1000 ms (goal)',
        ratio: fmtRatio(median(latencies) / 1000),
      },
    ],
  }
}

export const runs = defineBench({
  name: 'runs',
  script: 'bench:runs',
  summary:
    'cairn run apply on an agent against terraform apply of the same configuration here, and the time a log line takes to reach its follower',
  flags,
  quick: { rounds: 1, resources: 5 },
  inAll: true,
  run: async (values) => report(values, await measure(values)),
})
