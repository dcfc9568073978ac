import { execFile, spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'

/** The real terraform binary: `TERRAFORM_BIN`, or the first on PATH. */
export function terraformBinary(): string {
  const candidates = [
    process.env['TERRAFORM_BIN'],
    ...(process.env['PATH'] ?? '').split(delimiter).map((dir) => join(dir, 'terraform')),
  ].filter((path): path is string => path !== undefined && path !== '')
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {
      // not this one
    }
  }
  throw new Error(
    'terraform was not found on PATH or in TERRAFORM_BIN: install Terraform 1.11 (these suites drive the real binary)',
  )
}

/** A terraform process still running. */
export interface RunningTerraform {
  /** Everything it has written so far, stdout and stderr, in the order it arrived. */
  output(): string
  /** What it has written to stdout so far. */
  stdout(): string
  done: Promise<TerraformResult>
  kill(): void
  /** Ctrl-C: SIGINT, as a terminal sends it. */
  interrupt(): void
}

export interface TerraformResult {
  code: number
  stdout: string
  stderr: string
}

/**
 * A working directory with its own HOME and CLI config, so nothing of the machine's environment
 * (TF_CLI_CONFIG_FILE, credentials, plugin caches) leaks into a test.
 */
export class TerraformWorkspace {
  readonly dir: string
  readonly home: string
  readonly #binary: string
  readonly #env: Record<string, string>

  private constructor(dir: string, binary: string, env: Record<string, string>) {
    this.dir = dir
    this.home = join(dir, '.home')
    this.#binary = binary
    this.#env = env
  }

  #environment(extra: Record<string, string> = {}): Record<string, string> {
    return {
      PATH: process.env['PATH'] ?? '',
      HOME: this.home,
      CHECKPOINT_DISABLE: '1',
      TF_IN_AUTOMATION: '1',
      TF_INPUT: '0',
      TF_CLI_CONFIG_FILE: join(this.dir, '.terraformrc'),
      ...this.#env,
      ...extra,
    }
  }

  static async create(env: Record<string, string> = {}): Promise<TerraformWorkspace> {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-tf-'))
    const workspace = new TerraformWorkspace(dir, terraformBinary(), env)
    await mkdir(join(workspace.home, '.terraform.d'), { recursive: true })
    await writeFile(join(dir, '.terraformrc'), '')
    return workspace
  }

  async write(name: string, text: string): Promise<void> {
    await writeFile(join(this.dir, name), text)
  }

  /** Runs terraform with `args`; resolves with its exit code and output, whatever the code. */
  run(
    args: string[],
    options: { timeoutMs?: number; env?: Record<string, string>; input?: string } = {},
  ): Promise<TerraformResult> {
    const env = this.#environment(options.env)
    return new Promise((resolve) => {
      const child = execFile(
        this.#binary,
        args,
        { cwd: this.dir, env, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1
          resolve({ code, stdout: plain(stdout), stderr: plain(stderr) })
        },
      )
      // Terraform reads its prompts' answers here; closing it answers the rest with nothing.
      child.stdin?.end(options.input)
    })
  }

  /**
   * Starts terraform and returns at once, for commands a test talks to while they run
   * (`terraform login`): its output so far, and its result when it ends.
   */
  start(
    args: string[],
    options: { env?: Record<string, string>; input?: string } = {},
  ): RunningTerraform {
    let stdout = ''
    let stderr = ''
    // Not stdout + stderr: a line of stdout that has not ended yet would run on into stderr.
    let both = ''
    const child = spawn(this.#binary, args, {
      cwd: this.dir,
      env: this.#environment(options.env),
      stdio: 'pipe',
    })
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
      both += text
    })
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text
      both += text
    })
    child.stdin.end(options.input)
    const done = new Promise<TerraformResult>((resolve) => {
      child.on('close', (code) => {
        resolve({ code: code ?? 1, stdout: plain(stdout), stderr: plain(stderr) })
      })
    })
    return {
      output: () => plain(both),
      stdout: () => plain(stdout),
      done,
      kill: () => child.kill('SIGKILL'),
      interrupt: () => child.kill('SIGINT'),
    }
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }
}

/** Output without terminal colour codes, which Terraform writes unless told -no-color. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching the escape character is the point
  return text.replace(/\u001b\[[0-9;]*m/g, '')
}

/**
 * A configuration with Terraform's `http` backend on Cairn's `/v1/backend/{unit}` (one address for
 * state, lock and unlock; the token goes in `TF_HTTP_PASSWORD`), and one `terraform_data` resource
 * named `name` holding `input`.
 */
export function httpBackendConfig(address: string, input: string, name = 'app'): string {
  return `terraform {
  backend "http" {
    address        = "${address}"
    lock_address   = "${address}"
    unlock_address = "${address}"
    username       = "cairn"
  }
}

resource "terraform_data" "${name}" {
  input = "${input}"
}
`
}

/**
 * Terraform's `s3` backend block on Cairn's `/s3` at `url` (path style, a lock file, none of the
 * AWS account checks) for the state at `key`, with `extra` lines inside it: goes inside
 * `terraform { }`. Credentials come from the environment (`AWS_ACCESS_KEY_ID`, ...).
 */
export function s3BackendBlock(url: string, key: string, extra: readonly string[] = []): string {
  return [
    '  backend "s3" {',
    '    bucket                      = "tfstate"',
    `    key                         = "${key}"`,
    '    region                      = "auto"',
    `    endpoints                   = { s3 = "${url}/s3" }`,
    '    use_path_style              = true',
    '    use_lockfile                = true',
    '    skip_credentials_validation = true',
    '    skip_requesting_account_id  = true',
    '    skip_metadata_api_check     = true',
    '    skip_region_validation      = true',
    ...extra.map((line) => `    ${line}`),
    '  }',
  ].join('\n')
}
