import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { readArchive, unpack } from '../config-archive'
import type { PlanCounts } from '../run-record'
import type { Directive, Job } from '../run-service'
import type { AgentApi, Outcome } from './agent-api'
import { AgentApiError } from './http-agent-api'
import { LogSender } from './log-sender'

/** How often a run's agent says it is alive, and asks what to do. */
export const HEARTBEAT_MS = 2_000
/** How long Terraform has to stop after SIGINT before it gets SIGKILL. */
export const DEFAULT_CANCEL_GRACE_MS = 30_000
/** How long a call to the server is tried again while the server cannot be reached. */
const UNREACHABLE_MS = 120_000
/** The most of a configuration an agent unpacks, in bytes. */
const MAX_UNPACKED = 100 * 1024 * 1024

export interface ExecutorOptions {
  api: AgentApi
  /** The agent's name, for its log lines. */
  name: string
  /** The terraform binary to run. */
  terraform: string
  /** Where each run gets a fresh directory (the system's temporary directory by default). */
  workRoot: string
  /** `PATH` for Terraform and its provisioners. */
  path: string
  /** A CLI configuration file for Terraform (provider mirrors), when the agent was given one. */
  cliConfig?: string
  cancelGraceMs?: number
  /** Hears of what the agent could not do outside any run's log (a finish that never reached). */
  onError?: (error: unknown) => void
}

/** The run's own stop: a cancel from the server, or the agent being stopped. */
class Stopped extends Error {}

/**
 * One run on this machine: a fresh directory and a clean environment, the configuration and the
 * unit's state in it, `terraform init`, `plan` and (for an apply, once confirmed) `apply` with
 * their output streamed to the run's log, the state written back (after a failed or cancelled
 * apply too), and the run's end reported. A cancel interrupts Terraform (SIGINT to its process
 * group) and kills it after the grace period or when forced.
 */
export class RunExecutor {
  readonly #options: ExecutorOptions
  readonly #job: Job
  readonly #log: LogSender
  #directive: Directive = { cancel: 'none', apply: false, ended: false }
  #child: { kill(signal: NodeJS.Signals): void } | undefined
  #killTimer: NodeJS.Timeout | undefined
  #interrupted = false
  #stopReason: string | undefined

  constructor(options: ExecutorOptions, job: Job) {
    this.#options = options
    this.#job = job
    this.#log = new LogSender(options.api, job.id, job.secrets)
  }

  /** Stops the run from this side (the agent is stopping): Terraform is interrupted. */
  stop(reason: string): void {
    this.#stopReason = reason
    this.#interrupt()
  }

  /** Runs the job to its end and reports it; never rejects. */
  async run(): Promise<Outcome> {
    const { api } = this.#options
    const job = this.#job
    const dir = await mkdtemp(join(this.#options.workRoot, `cairn-run-${job.id}-`))
    const heartbeat = setInterval(() => void this.#beat(), HEARTBEAT_MS)
    let outcome: Outcome
    try {
      outcome = await this.#execute(dir)
    } catch (error) {
      outcome =
        this.#stopReason !== undefined
          ? { status: 'failed', error: this.#stopReason }
          : error instanceof Stopped || this.#interrupted
            ? { status: 'canceled' }
            : { status: 'failed', error: error instanceof Error ? error.message : String(error) }
    } finally {
      clearInterval(heartbeat)
      if (this.#killTimer !== undefined) clearTimeout(this.#killTimer)
    }
    this.#log.write(
      `\ncairn: run ${job.id} ${outcome.status}${outcome.error === undefined ? '' : `: ${outcome.error}`}\n`,
    )
    await this.#log.close()
    try {
      await this.#call(() => api.finish(job.id, outcome))
    } catch (error) {
      // The server's reconciler ends the run once this agent's heartbeats stop.
      this.#options.onError?.(error)
    }
    await rm(dir, { recursive: true, force: true }).catch(() => undefined)
    return outcome
  }

  async #execute(dir: string): Promise<Outcome> {
    const { api } = this.#options
    const job = this.#job
    const work = join(dir, 'work')
    const home = join(dir, 'home')
    const tmp = join(dir, 'tmp')
    await Promise.all([mkdir(work), mkdir(home), mkdir(tmp)])
    if (this.#options.cliConfig === undefined) await writeFile(join(home, '.terraformrc'), '')
    this.#log.write(
      `cairn: run ${job.id} (${job.operation} of ${job.unit}) on agent ${job.agent}\n`,
    )
    const config = await this.#fetchConfig(work, home)
    const state = await this.#call(() => api.state(job.id))
    const stateFile = join(dir, 'terraform.tfstate')
    if (state !== undefined) await writeFile(stateFile, state)
    // The unit's state lives beside the configuration, in a local backend that replaces whatever
    // backend or cloud block the configuration names: Cairn writes the state itself.
    await writeFile(
      join(config, 'zz_cairn_run_override.tf'),
      `terraform {\n  backend "local" {\n    path = ${JSON.stringify(stateFile)}\n  }\n}\n`,
    )
    const env = this.#environment(home, tmp)
    const varFiles = await this.#writeVariables(dir)
    this.#checkCancel()
    await this.#terraform(['init', '-input=false', '-no-color'], config, env, 'init')
    this.#checkCancel()
    const planCode = await this.#terraform(
      [
        'plan',
        '-input=false',
        '-no-color',
        '-detailed-exitcode',
        '-out=run.tfplan',
        ...varFiles.map((file) => `-var-file=${file}`),
        ...planOptions(job),
      ],
      config,
      env,
      'plan',
      [0, 2],
    )
    const counts = await this.#counts(config, env)
    const changes = planCode === 2
    const logChunks = await this.#log.mark()
    this.#directive = await this.#call(() => api.planned(job.id, counts, changes, logChunks))
    if (job.operation === 'plan' || !changes) return { status: 'succeeded' }
    while (!this.#directive.apply) {
      this.#checkCancel()
      if (this.#directive.ended) throw new Stopped('the run ended on the server')
      await new Promise((done) => setTimeout(done, 1000))
      this.#directive = await this.#call(() => api.heartbeat(job.id))
    }
    this.#checkCancel()
    let applyError: unknown
    try {
      await this.#terraform(
        ['apply', '-input=false', '-no-color', 'run.tfplan'],
        config,
        env,
        'apply',
      )
    } catch (error) {
      applyError = error
    }
    // What Terraform left, partial after a failed or cancelled apply, is written all the same.
    const diverged = await this.#writeState(stateFile, state)
    if (applyError !== undefined) {
      const message = applyError instanceof Error ? applyError.message : 'terraform apply failed'
      const canceled = this.#interrupted && this.#stopReason === undefined
      return {
        status: canceled ? 'canceled' : 'failed',
        ...(canceled ? {} : { error: this.#stopReason ?? message }),
        ...(diverged ? { stateDiverged: true } : {}),
      }
    }
    return diverged
      ? { status: 'failed', error: 'the state could not be written to Cairn', stateDiverged: true }
      : { status: 'succeeded' }
  }

  /** Writes the state if Terraform changed it; answers whether that failed. */
  async #writeState(stateFile: string, before: Buffer | undefined): Promise<boolean> {
    const after = await readFile(stateFile).catch(() => undefined)
    if (after === undefined || (before !== undefined && after.equals(before))) return false
    this.#log.write('cairn: writing the state to Cairn\n')
    try {
      await this.#call(() => this.#options.api.writeState(this.#job.id, after))
      return false
    } catch (error) {
      this.#log.write(
        `cairn: the state could not be written: ${error instanceof Error ? error.message : String(error)}\n`,
      )
      return true
    }
  }

  /** Unpacks or clones the configuration; answers the directory Terraform runs in. */
  async #fetchConfig(work: string, home: string): Promise<string> {
    const { source } = this.#job
    if ('upload' in source) {
      const archive = await this.#call(() => this.#options.api.config(this.#job.id))
      await unpack(readArchive(archive, MAX_UNPACKED), work)
      return work
    }
    const { url, ref, path } = source.git
    const git = { PATH: this.#options.path, HOME: home, GIT_TERMINAL_PROMPT: '0' }
    this.#log.write(`cairn: fetching ${ref} of ${url}\n`)
    await this.#process('git', ['init', '--quiet'], work, git, 'git init')
    await this.#process(
      'git',
      ['fetch', '--quiet', '--depth', '1', '--', url, ref],
      work,
      git,
      'git fetch',
    )
    await this.#process('git', ['checkout', '--quiet', 'FETCH_HEAD'], work, git, 'git checkout')
    const config = path === undefined ? work : join(work, ...path.split('/'))
    if (!(await stat(config).catch(() => undefined))?.isDirectory()) {
      throw new Error(`${path ?? '.'} is not a directory of ${url} at ${ref}`)
    }
    return config
  }

  /**
   * The run's variables in files outside the configuration, given to the plan with `-var-file`
   * so they weigh most, as `-var` does: strings in a JSON file (taken as they are), HCL values
   * (`["a"]`, `5`, the `cloud` block's `-var` values) in a `.tfvars` file.
   */
  async #writeVariables(dir: string): Promise<string[]> {
    const strings: Record<string, string> = {}
    const hcl: string[] = []
    for (const [name, { value, hcl: isHcl }] of Object.entries(this.#job.variables)) {
      if (isHcl) hcl.push(`${name} = ${value}\n`)
      else strings[name] = value
    }
    const files: string[] = []
    if (Object.keys(strings).length > 0) {
      const file = join(dir, 'cairn-run.tfvars.json')
      await writeFile(file, JSON.stringify(strings), { mode: 0o600 })
      files.push(file)
    }
    if (hcl.length > 0) {
      const file = join(dir, 'cairn-run.tfvars')
      await writeFile(file, hcl.join(''), { mode: 0o600 })
      files.push(file)
    }
    return files
  }

  /** Terraform's environment: the run's env, and nothing of the agent's own. */
  #environment(home: string, tmp: string): Record<string, string> {
    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(this.#job.env)) env[name] = value
    return {
      ...env,
      PATH: this.#options.path,
      HOME: home,
      TMPDIR: tmp,
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      CHECKPOINT_DISABLE: '1',
      TF_CLI_CONFIG_FILE: this.#options.cliConfig ?? join(home, '.terraformrc'),
      CAIRN_RUN_ID: this.#job.id,
      CAIRN_UNIT: this.#job.unit,
    }
  }

  /** The plan's counts, from `terraform show -json`: a replace counts once to add, once to destroy. */
  async #counts(config: string, env: Record<string, string>): Promise<PlanCounts> {
    const output = await this.#capture(['show', '-json', 'run.tfplan'], config, env)
    const plan = JSON.parse(output) as { resource_changes?: { change?: { actions?: string[] } }[] }
    const counts = { add: 0, change: 0, destroy: 0 }
    for (const change of plan.resource_changes ?? []) {
      const actions = change.change?.actions ?? []
      if (actions.includes('create')) counts.add += 1
      if (actions.includes('delete')) counts.destroy += 1
      if (actions.includes('update')) counts.change += 1
    }
    return counts
  }

  /** Runs terraform with its output in the run's log; answers its exit code when one of `ok`. */
  #terraform(
    args: string[],
    cwd: string,
    env: Record<string, string>,
    what: string,
    ok: number[] = [0],
  ): Promise<number> {
    this.#log.write(`\ncairn: terraform ${what}\n`)
    return this.#process(this.#options.terraform, args, cwd, env, `terraform ${what}`, ok)
  }

  #process(
    command: string,
    args: string[],
    cwd: string,
    env: Record<string, string>,
    what: string,
    ok: number[] = [0],
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        cwd,
        env,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const group = {
        kill: (signal: NodeJS.Signals) => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, signal)
          } catch {
            // Gone already.
          }
        },
      }
      this.#child = group
      if (this.#interrupted) group.kill('SIGINT')
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        this.#log.write(text)
      })
      child.stderr.setEncoding('utf8').on('data', (text: string) => {
        this.#log.write(text)
      })
      child.on('error', (error) => {
        this.#child = undefined
        reject(new Error(`${what} could not start: ${error.message}`))
      })
      child.on('close', (code, signal) => {
        this.#child = undefined
        if (code !== null && ok.includes(code)) resolve(code)
        else if (this.#interrupted) reject(new Stopped(this.#stopReason ?? 'canceled'))
        else
          reject(
            new Error(
              `${what} ${code === null ? `was killed (${signal ?? ''})` : `exited with ${code}`}`,
            ),
          )
      })
    })
  }

  /** Runs terraform and answers what it printed on stdout (not logged). */
  #capture(args: string[], cwd: string, env: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#options.terraform, args, {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      let errors = ''
      child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
      child.stderr.setEncoding('utf8').on('data', (text: string) => (errors += text))
      child.on('error', reject)
      child.on('close', (code) => {
        if (code === 0) resolve(output)
        else reject(new Error(`terraform show failed: ${errors.trim()}`))
      })
    })
  }

  /**
   * A call to the server, tried again (with a growing pause) while the server cannot be reached
   * or answers 502, 503 or 504: a server restarting under a run does not fail it. A refusal fails
   * at once.
   */
  async #call<T>(call: () => Promise<T>): Promise<T> {
    const until = Date.now() + UNREACHABLE_MS
    for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
      try {
        return await call()
      } catch (error) {
        if (!isTransient(error) || Date.now() + pause > until) throw error
        await new Promise((done) => setTimeout(done, pause))
      }
    }
  }

  async #beat(): Promise<void> {
    try {
      this.#directive = await this.#options.api.heartbeat(this.#job.id)
    } catch {
      // The next beat tries again; the server ends the run if none reaches it for long.
      return
    }
    if (this.#directive.cancel === 'kill' || this.#directive.ended) this.#kill()
    else if (this.#directive.cancel === 'interrupt') this.#interrupt()
  }

  #checkCancel(): void {
    if (this.#interrupted || this.#directive.cancel !== 'none') {
      this.#interrupted = true
      throw new Stopped(this.#stopReason ?? 'canceled')
    }
  }

  /** SIGINT now, SIGKILL after the grace period. */
  #interrupt(): void {
    if (this.#interrupted) return
    this.#interrupted = true
    this.#log.write('\ncairn: canceling: Terraform is interrupted\n')
    this.#child?.kill('SIGINT')
    this.#killTimer = setTimeout(() => {
      this.#kill()
    }, this.#options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS)
  }

  #kill(): void {
    this.#interrupted = true
    this.#child?.kill('SIGKILL')
  }
}

/** A failure to reach the server, or an answer that says to try again. */
function isTransient(error: unknown): boolean {
  if (error instanceof AgentApiError) return [502, 503, 504].includes(error.status)
  // fetch's own failures: no connection, a reset, a closed socket.
  return error instanceof TypeError
}

/** The plan's flags for the run's operation and options. */
function planOptions(job: Job): string[] {
  const options = job.options ?? {}
  return [
    ...(job.operation === 'destroy' || options.destroy === true ? ['-destroy'] : []),
    ...(options.refresh_only === true ? ['-refresh-only'] : []),
    ...(options.refresh === false ? ['-refresh=false'] : []),
    ...(options.targets ?? []).map((address) => `-target=${address}`),
    ...(options.replace ?? []).map((address) => `-replace=${address}`),
  ]
}
