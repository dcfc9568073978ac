// What the benchmarks share: starting the built Cairn server (and a baseline) as child processes,
// releasing them and their temporary directories on the way out whatever the way out is, and the
// median. See bench/README.md.
import { spawn } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { Agent } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import process from 'node:process'
import { createInterface } from 'node:readline'
import { clearTimeout, setTimeout } from 'node:timers'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

export const root = join(dirname(fileURLToPath(import.meta.url)), '..')
export const serverMain = join(root, 'apps', 'server', 'dist', 'main.js')
/**
 * The `node` flags every documented way of running the server passes (`npm start`, the Dockerfile,
 * the systemd unit, the README): a first heap of 64 MiB, without which V8 keeps the main thread in
 * back-to-back full collections during large uploads (README, "Running as a service").
 */
export const serverNodeFlags = ['--initial-heap-size=64']

/**
 * The arguments that run the built server on a free local port, with `flags` after. No server
 * serves metrics: several run at once, and would all take its default port.
 */
export function serverArgs(...flags) {
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

/** The arguments that run the built server on the `fs` store in `dataDir`, authentication off. */
export function cairnArgs(dataDir) {
  return serverArgs('-auth-disable', '-storage', 'fs', '-data-dir', dataDir)
}

/** A failure the benchmark reports in one line (exit 1), rather than with a stack. */
export class BenchError extends Error {}

/** Whether a signal is stopping the benchmark (its error is then not worth reporting). */
export let interrupted = false

// Cleanup: every child process and temporary directory is registered, and released on the way
// out whatever the way out is (normal end, error, Ctrl-C).

export const children = new Set()
const temporaryDirs = new Set()
/**
 * Whatever else a benchmark starts (such as a Ceph cluster): each has `stop()`, which releases it
 * and waits, and `kill()`, synchronous, the last resort when the process exits.
 */
export const resources = new Set()

export async function makeTemporaryDir(prefix) {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temporaryDirs.add(dir)
  return dir
}

export async function removeTemporaryDir(dir) {
  await rm(dir, { recursive: true, force: true })
  temporaryDirs.delete(dir)
}

export async function cleanUp() {
  await Promise.allSettled([...children].map((server) => server.stop()))
  await Promise.allSettled([...resources].map((resource) => resource.stop()))
  await Promise.allSettled([...temporaryDirs].map(removeTemporaryDir))
}

// The last resort, synchronous: whatever is still there when the process exits.
process.on('exit', () => {
  for (const server of children) server.child.kill('SIGKILL')
  for (const resource of resources) resource.kill()
  for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true })
})
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true
    process.stderr.write(`bench: ${signal}, stopping the servers\n`)
    void cleanUp().finally(() => process.exit(130))
  })
}

/**
 * Starts `node <args>` and waits for its JSON `listening` log line. The server object can stop it,
 * tell why it stopped, and show its last output lines for an error message. `env` is added to the
 * benchmark's own environment.
 */
export async function startServer(label, args, { env = {} } = {}) {
  const child = spawn(process.execPath, args, {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  })
  const tail = []
  const remember = (line) => {
    tail.push(line)
    if (tail.length > 20) tail.shift()
  }
  let exit
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal === null ? `exit status ${code}` : `signal ${signal}`
      resolve()
    })
  })
  const server = {
    label,
    child,
    pid: child.pid,
    port: 0,
    agent: new Agent({ keepAlive: true, maxSockets: 1 }),
    exited,
    /** Why it stopped, or undefined while it runs. */
    exit: () => exit,
    /** Its last output lines, for an error message. */
    tail: () =>
      tail.length === 0 ? '' : `\n  last output of ${label}:\n    ${tail.join('\n    ')}`,
    /** SIGTERM, and SIGKILL if it has not stopped within 20 seconds. */
    async stop() {
      server.agent.destroy()
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
      children.delete(server)
    },
  }
  children.add(server)
  createInterface({ input: child.stderr }).on('line', remember)
  const lines = createInterface({ input: child.stdout })
  server.port = await new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new BenchError(`${label} did not say it was listening within 30 s${server.tail()}`)),
      30_000,
    )
    child.once('error', (error) => {
      clearTimeout(timer)
      reject(new BenchError(`cannot start ${label}: ${error.message}`))
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new BenchError(`${label} stopped before it was listening (${exit})${server.tail()}`))
    })
    lines.on('line', (line) => {
      remember(line)
      if (server.port !== 0) return
      try {
        const entry = JSON.parse(line)
        if (entry.msg === 'listening' && Number.isInteger(entry.port)) {
          clearTimeout(timer)
          resolve(entry.port)
        }
      } catch {
        // not a JSON line
      }
    })
  })
  return server
}

/** The median of a list of numbers. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/**
 * Runs a benchmark's `main(flags)`: builds first unless `flags.build` is false (as `npm start`
 * does), checks the built server is there, reports a failure in one line with exit status 1, and
 * releases every server and temporary directory on the way out.
 */
export async function runBench(flags, main) {
  try {
    if (flags.build) {
      const { bootstrap } = await import('../scripts/bootstrap.mjs')
      bootstrap()
    }
    if (!existsSync(serverMain)) {
      throw new BenchError(`${relative(root, serverMain)} is missing: build first (npm run build)`)
    }
    await main(flags)
  } catch (error) {
    if (!interrupted)
      process.stderr.write(`bench: ${error instanceof BenchError ? error.message : error.stack}\n`)
    process.exitCode = 1
  } finally {
    await cleanUp()
  }
}

/**
 * One request to a bench server, answered as JSON (or undefined when empty). Throws a BenchError
 * naming the server, the request and its answer when the status is not `expect`.
 */
export async function request(server, method, path, { body, expect = 200, headers = {} } = {}) {
  let response
  try {
    response = await globalThis.fetch(`http://127.0.0.1:${server.port}${path}`, {
      method,
      body,
      headers,
    })
  } catch (error) {
    throw new BenchError(
      `${server.label}: ${method} ${path} failed: ${error.message}${server.tail()}`,
    )
  }
  const text = await response.text()
  if (response.status !== expect) {
    throw new BenchError(
      `${server.label}: ${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`,
    )
  }
  return text === '' ? undefined : JSON.parse(text)
}

/** Runs `job(i)` for i in [0, count) with `limit` in flight. */
export async function pool(count, limit, job) {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next
      next += 1
      await job(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker))
}

/**
 * Parses a benchmark's flags (`-h`/`--help` prints `usage` and exits 0; an unknown flag exits 2)
 * and returns their values with `whole(name, text, min, max)`, which exits 2 with a clear message
 * unless `text` is a whole number in range.
 */
export function parseBenchFlags(options, usage) {
  let values
  try {
    ;({ values } = parseArgs({
      options: { ...options, help: { type: 'boolean', short: 'h', default: false } },
    }))
  } catch (error) {
    process.stderr.write(`bench: ${error.message}\n${usage}`)
    process.exit(2)
  }
  if (values.help) {
    process.stdout.write(usage)
    process.exit(0)
  }
  const whole = (name, text, min, max) => {
    const n = Number(text)
    if (text.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
      process.stderr.write(`bench: --${name} must be a whole number from ${min} to ${max}\n`)
      process.exit(2)
    }
    return n
  }
  return { values, whole }
}

/**
 * The flags of a bench over a store of many units (`--units`, `--rounds`, `--concurrency`,
 * `--no-build`), with the defaults its `usage` gives.
 */
export function parseStoreFlags(usage) {
  const { values, whole } = parseBenchFlags(
    {
      units: { type: 'string', default: '10000' },
      rounds: { type: 'string', default: '31' },
      concurrency: { type: 'string', default: '32' },
      'no-build': { type: 'boolean', default: false },
    },
    usage,
  )
  return {
    units: whole('units', values.units, STORE_PREFIXES, 100_000),
    rounds: whole('rounds', values.rounds, 1, 10_000),
    concurrency: whole('concurrency', values.concurrency, 1, 256),
    build: !values['no-build'],
  }
}

/** How many prefixes such a store spreads its units over. */
export const STORE_PREFIXES = 100
/** The prefix of number `prefix`: `team-007`. */
export const team = (prefix) => `team-${String(prefix).padStart(3, '0')}`
/** Unit `index` lives under prefix `index % 100`: `team-007/app-0000` is unit 7. */
export const unitName = (index) =>
  `${team(index % STORE_PREFIXES)}/app-${String(Math.floor(index / STORE_PREFIXES)).padStart(4, '0')}`
