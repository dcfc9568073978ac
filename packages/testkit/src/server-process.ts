import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The built server, as `npm start` runs it. The root vitest config's global setup builds the
 * workspace before any suite runs, so this is today's code.
 */
export const SERVER_MAIN = fileURLToPath(
  new URL('../../../apps/server/dist/main.js', import.meta.url),
)

export interface ServerOptions {
  /**
   * Flags after the defaults (`-auth-disable -host 127.0.0.1 -port 0 -metrics-port 0 -data-dir
   * <dir>`): a free port for the metrics too, so that servers started at once do not collide.
   */
  args?: string[]
  /** Leave authentication on: local mode, or an OpenID provider given in `env`. */
  auth?: boolean
  /** Reuse a data directory (to restart on it); a new temporary one otherwise. */
  dataDir?: string
  env?: Record<string, string>
  /** How long to wait for the server to listen. */
  startTimeoutMs?: number
  /** Runs the server under `ulimit -n fileLimit`, to run it out of file handles. */
  fileLimit?: number
  /**
   * Starts the server with a reader's own command instead: `bash -c script` in `cwd`. The script
   * must `exec` the server, so that the PID stays node's. The defaults then travel as their
   * variables (`SVC_AUTH_DISABLE`, `SVC_HOST`, `PORT`, `SVC_METRICS_PORT`, `SVC_DATA_DIR`); `args`
   * cannot be given.
   */
  shell?: { script: string; cwd: string }
}

export interface RunningServer {
  url: string
  port: number
  dataDir: string
  /** `GET /metrics` on the loopback listener, as the server logs it; undefined when it has none. */
  metricsUrl: string | undefined
  pid: number
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  /** Sends a signal and waits for the process to exit; returns its exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
  /** Stops the server (if running) and removes a temporary data directory it made. */
  dispose(): Promise<void>
}

/**
 * Starts the real server process on a free port of 127.0.0.1 and waits until it logs that it
 * listens. Fails with the server's own output if it exits or does not listen in time.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  if (!existsSync(SERVER_MAIN)) {
    throw new Error(
      `${SERVER_MAIN} is missing: run the suites through vitest with the root config, which builds it first, or run npm run build`,
    )
  }
  const ownDir = options.dataDir === undefined
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'cairn-data-')))
  const args = [
    ...(options.auth === true ? [] : ['-auth-disable']),
    ...['-host', '127.0.0.1', '-port', '0', '-metrics-port', '0', '-data-dir', dataDir],
    ...(options.args ?? []),
  ]
  const { file, argv, env } = command(options, args, dataDir)
  const child = spawn(file, argv, {
    env: { ...process.env, SVC_LOG_LEVEL: 'info', SVC_AUTH_DISABLE: '', ...env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.shell === undefined ? {} : { cwd: options.shell.cwd }),
  })
  let output = ''
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      resolve(code)
    }),
  )
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
  child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))

  const { port, url } = await new Promise<{ port: number; url: string }>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `the server did not listen within ${options.startTimeoutMs ?? 15_000} ms:\n${output}`,
        ),
      )
    }, options.startTimeoutMs ?? 15_000)
    const check = (): void => {
      const line = output.split('\n').find((text) => text.includes('"msg":"listening"'))
      if (line === undefined) return
      clearTimeout(timer)
      resolve(JSON.parse(line) as { port: number; url: string })
    }
    child.stdout.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`the server exited with code ${code} before listening:\n${output}`))
    })
  })

  const metricsLine = output.split('\n').find((text) => text.includes('"msg":"metrics"'))
  const metricsUrl =
    metricsLine === undefined ? undefined : (JSON.parse(metricsLine) as { url?: string }).url

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  return {
    // http or https (with -tls-cert), as the server says where it listens.
    url,
    port,
    dataDir,
    metricsUrl,
    pid: child.pid as number,
    output: () => output,
    stop,
    dispose: async () => {
      await stop('SIGKILL')
      if (ownDir) await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** What to spawn: node with the flags, or a shell's start command with the same defaults. */
function command(
  options: ServerOptions,
  args: string[],
  dataDir: string,
): { file: string; argv: string[]; env: Record<string, string> } {
  if (options.shell !== undefined) {
    if (options.args !== undefined) throw new Error('startServer: give args or shell, not both')
    return {
      file: 'bash',
      argv: ['-c', options.shell.script],
      env: {
        SVC_AUTH_DISABLE: options.auth === true ? '' : 'true',
        SVC_HOST: '127.0.0.1',
        PORT: '0',
        SVC_METRICS_PORT: '0',
        SVC_DATA_DIR: dataDir,
      },
    }
  }
  // A file-handle limit has to be set by the process that execs node: `sh` sets it and execs, so
  // the PID stays node's.
  if (options.fileLimit === undefined) {
    return { file: process.execPath, argv: [SERVER_MAIN, ...args], env: {} }
  }
  return {
    file: 'sh',
    argv: [
      '-c',
      `ulimit -n ${options.fileLimit} && exec "$0" "$@"`,
      process.execPath,
      SERVER_MAIN,
      ...args,
    ],
    env: {},
  }
}

/** The admin token local mode wrote into a data directory (`admin.token`: the token and a newline). */
export async function readAdminToken(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
}
