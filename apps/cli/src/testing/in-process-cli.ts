import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, vi } from 'vitest'
import { root } from '../commands/index'
import { routeRequestsThrough } from '../context'
import { runCli } from '../run'
import { askThrough } from '../terminal/confirm'

/** What one `cairn` run wrote, and what it failed with. */
export interface Run {
  stdout: string
  stderr: string
  error: Error | undefined
}

/** The server the commands of a test talk to unless it names another: `SVC_SERVER_URL`. */
export const TEST_SERVER = 'http://localhost:8080'

/**
 * Gives each test a HOME of its own (profiles, remembered locks), `SVC_SERVER_URL` naming
 * `TEST_SERVER` (as a user names the server; a test of how the server is chosen sets it empty),
 * no CA or token from the environment, and no terminal to ask; it forgets the app the commands
 * were routed to, and the answers given, afterwards.
 *
 * @returns the test's HOME, read inside a test
 */
export function useCliHome(prefix: string): () => string {
  let home: string | undefined
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), prefix))
    vi.stubEnv('HOME', home)
    vi.stubEnv('XDG_CONFIG_HOME', join(home, '.config'))
    vi.stubEnv('SVC_SERVER_URL', TEST_SERVER)
    vi.stubEnv('CAIRN_CA_FILE', '')
    vi.stubEnv('CAIRN_TOKEN', '')
    vi.stubEnv('NO_COLOR', '1')
  })
  afterEach(async () => {
    routeRequestsThrough(undefined)
    askThrough(undefined)
    vi.unstubAllEnvs()
    if (home !== undefined) await rm(home, { recursive: true, force: true })
    home = undefined
  })
  return () => {
    if (home === undefined) throw new Error('the test HOME exists only inside a test')
    return home
  }
}

/** Sends the commands' requests to `app` from now on, noting each as `METHOD /path` in `sent`. */
export function routeTo(
  app: { request: (request: Request) => Response | Promise<Response> },
  sent: string[],
): void {
  routeRequestsThrough(async (input, init) => {
    const request = new Request(input, init)
    sent.push(`${request.method} ${new URL(request.url).pathname}`)
    return await app.request(request)
  })
}

/** Runs `cairn <args>` through the runner: what it wrote on stdout and stderr, and its failure. */
export async function run(...args: string[]): Promise<Run> {
  const stdout = capture(process.stdout)
  const stderr = capture(process.stderr)
  let error: Error | undefined
  try {
    await runCli(root, args)
  } catch (caught) {
    error = caught instanceof Error ? caught : new Error(String(caught))
  } finally {
    stdout.restore()
    stderr.restore()
  }
  return { stdout: stdout.text(), stderr: stderr.text(), error }
}

/** Runs `cairn <args>`, which must succeed, and answers its stdout. */
export async function cairn(...args: string[]): Promise<string> {
  const result = await run(...args)
  if (result.error !== undefined) throw result.error
  return result.stdout
}

/** Runs `cairn <args> --json` and parses what it printed. */
export async function json<T>(...args: string[]): Promise<T> {
  return JSON.parse(await cairn(...args, '--json')) as T
}

function capture(stream: NodeJS.WriteStream) {
  const chunks: Buffer[] = []
  const spy = vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(Buffer.from(chunk))
    return true
  })
  return {
    text: () => Buffer.concat(chunks).toString('utf8'),
    restore: () => {
      spy.mockRestore()
    },
  }
}
