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
  /** Flags after the defaults (`-auth-disable -host 127.0.0.1 -port 0 -data-dir <dir>`). */
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
}

export interface RunningServer {
  url: string
  port: number
  dataDir: string
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
    ...['-host', '127.0.0.1', '-port', '0', '-data-dir', dataDir],
    ...(options.args ?? []),
  ]
  // A file-handle limit has to be set by the process that execs node: `sh` sets it and execs, so
  // the PID stays node's.
  const [file, argv]: [string, string[]] =
    options.fileLimit === undefined
      ? [process.execPath, [SERVER_MAIN, ...args]]
      : [
          'sh',
          [
            '-c',
            `ulimit -n ${options.fileLimit} && exec "$0" "$@"`,
            process.execPath,
            SERVER_MAIN,
            ...args,
          ],
        ]
  const child = spawn(file, argv, {
    env: { ...process.env, SVC_LOG_LEVEL: 'info', SVC_AUTH_DISABLE: '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
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

  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal)
    return exited
  }
  return {
    // http or https (with -tls-cert), as the server says where it listens.
    url,
    port,
    dataDir,
    pid: child.pid as number,
    output: () => output,
    stop,
    dispose: async () => {
      await stop('SIGKILL')
      if (ownDir) await rm(dataDir, { recursive: true, force: true })
    },
  }
}

/** The admin token local mode wrote into a data directory (`admin.token`: the token and a newline). */
export async function readAdminToken(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
}
