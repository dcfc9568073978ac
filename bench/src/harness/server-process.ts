import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { Agent } from 'node:http'
import { join, relative } from 'node:path'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { BenchError } from './bench-error'
import { track } from './cleanup'
import { baselineMain, root, serverMain } from './paths'

/**
 * The `node` flags every documented way of running the server passes (`npm start`, the Dockerfile,
 * the systemd unit, the README): a first heap of 64 MiB, without which V8 keeps the main thread in
 * back-to-back full collections during large uploads (docs/deployment.md, "Running as a service").
 */
export const serverNodeFlags = ['--initial-heap-size=64']

/**
 * The arguments that run the built server on a free local port, with `flags` after. No server
 * serves metrics: several run at once, and would all take its default port.
 */
export function serverArgs(...flags: string[]): string[] {
  return [
    ...serverNodeFlags,
    serverMain,
    '-host',
    '127.0.0.1',
    '-port',
    '0',
    '-metrics-port',
    'off',
    ...flags,
  ]
}

/** The built server on the `fs` store in `dataDir`, authentication off. */
export function openServerArgs(dataDir: string, ...flags: string[]): string[] {
  return serverArgs('-auth-disable', '-storage', 'fs', '-data-dir', dataDir, ...flags)
}

/** The built server in local mode (authentication on, an admin token) on the `fs` store. */
export function localServerArgs(dataDir: string, ...flags: string[]): string[] {
  return serverArgs('-storage', 'fs', '-data-dir', dataDir, ...flags)
}

/** The admin token a server in local mode wrote to its data directory. */
export async function readAdminToken(dataDir: string): Promise<string> {
  return (await readFile(join(dataDir, 'admin.token'), 'utf8')).trim()
}

/** A child process of the bench that listens on a local port. */
export interface BenchServer {
  readonly label: string
  readonly pid: number
  readonly port: number
  readonly origin: string
  /** One kept-alive connection, for the node:http client. */
  readonly agent: Agent
  readonly exited: Promise<void>
  /** Why it stopped, or undefined while it runs. */
  exit(): string | undefined
  /** Its last output lines, for an error message. */
  tail(): string
  /** SIGTERM, and SIGKILL if it has not stopped within 20 seconds. */
  stop(): Promise<void>
}

/**
 * Starts `node <args>` and waits for its JSON `listening` log line (the server's and the
 * baseline's). `env` is added to the bench's own environment.
 */
export async function startServer(
  label: string,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  options: { readonly onLine?: (line: string) => void } = {},
): Promise<BenchServer> {
  const program = args.find((arg) => arg.endsWith('.js'))
  if (program !== undefined && !existsSync(program)) {
    throw new BenchError(`${relative(root, program)} is missing: build first (npm run build)`)
  }
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  const lastLines: string[] = []
  const remember = (line: string) => {
    lastLines.push(line)
    if (lastLines.length > 20) lastLines.shift()
  }
  let exit: string | undefined
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal === null ? `exit status ${code ?? 'unknown'}` : `signal ${signal}`
      resolve()
    })
  })
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const tail = () =>
    lastLines.length === 0 ? '' : `\n  last output of ${label}:\n    ${lastLines.join('\n    ')}`
  const stop = async () => {
    agent.destroy()
    if (exit === undefined) {
      child.kill('SIGTERM')
      const stopped = await Promise.race([
        exited.then(() => true),
        sleep(20_000, false, { ref: false }),
      ])
      if (!stopped) {
        child.kill('SIGKILL')
        await exited
      }
    }
    forget()
  }
  const forget = track({ stop, kill: () => child.kill('SIGKILL') })
  createInterface({ input: child.stderr }).on('line', remember)
  const lines = createInterface({ input: child.stdout })
  const port = await new Promise<number>((resolve, reject) => {
    let found = 0
    const timer = setTimeout(() => {
      reject(new BenchError(`${label} did not say it was listening within 30 s${tail()}`))
    }, 30_000)
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(new BenchError(`cannot start ${label}: ${error.message}`))
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new BenchError(`${label} stopped before it was listening (${exit ?? ''})${tail()}`))
    })
    lines.on('line', (line) => {
      remember(line)
      options.onLine?.(line)
      if (found !== 0) return
      const port = listeningPort(line)
      if (port === undefined) return
      found = port
      clearTimeout(timer)
      resolve(port)
    })
  })
  return {
    label,
    pid: child.pid ?? 0,
    port,
    origin: `http://127.0.0.1:${port}`,
    agent,
    exited,
    exit: () => exit,
    tail,
    stop,
  }
}

/** The port of a `{"msg":"listening","port":n}` log line; undefined for any other line. */
export function listeningPort(line: string): number | undefined {
  try {
    const entry = JSON.parse(line) as { msg?: unknown; port?: unknown }
    return entry.msg === 'listening' && Number.isInteger(entry.port)
      ? (entry.port as number)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The baseline server (src/baseline-server.ts) storing its state in `dir`, serving downloads in
 * reads of `readKiB` KiB; over HTTPS with `tls`.
 */
export function startBaseline(
  dir: string,
  readKiB: number,
  tls?: { readonly certPath: string; readonly keyPath: string },
  options: { readonly asCairnKeepsIt?: boolean } = {},
): Promise<BenchServer> {
  const args = [baselineMain, dir, String(readKiB)]
  if (tls !== undefined) args.push(tls.certPath, tls.keyPath)
  return startServer(
    'the baseline server',
    args,
    options.asCairnKeepsIt === true ? { BASELINE_AS_CAIRN: '1' } : {},
  )
}

/** Stops `servers` and fails unless each stopped as asked (SIGTERM, or exit status 0). */
export async function stopCleanly(...servers: BenchServer[]): Promise<void> {
  await Promise.all(servers.map((server) => server.stop()))
  for (const server of servers) {
    const exit = server.exit()
    if (exit !== 'exit status 0' && exit !== 'signal SIGTERM') {
      throw new BenchError(`${server.label} did not stop cleanly (${exit ?? ''})${server.tail()}`)
    }
  }
}

/** Fails with the way `server` stopped, if it has. */
export function checkAlive(server: BenchServer): void {
  const exit = server.exit()
  if (exit !== undefined) throw new BenchError(`${server.label} died: ${exit}${server.tail()}`)
}
