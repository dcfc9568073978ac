import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { RunningServer } from '@cairn/testkit'

/** The checkout's root, where the README and `apps/` are. */
export const ROOT = fileURLToPath(new URL('../../../..', import.meta.url))

/** What a shell run printed, and how it ended. */
export interface ShellRun {
  code: number | null
  output: string
}

/** Runs `script` with `bash -euo pipefail` in `cwd`, failing after `timeoutMs`. */
export function runShell(
  script: string,
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<ShellRun> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text))
    const deadline = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(deadline)
      resolve({ code, output })
    })
  })
}

/** The `KEY=value` lines of an environment file. */
export function parseEnvFile(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line.trim()))
    .filter((match) => match !== null)
    .map((match) => [match[1] as string, match[2] as string] as const)
  return Object.fromEntries(entries)
}

/** A Terraform state of `serial` whose bytes name `tag`, so that two writes never match. */
export function stateOf(serial: number, tag: string, lineage = 'multi-instance'): string {
  return `${JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage,
    outputs: { tag: { value: tag, type: 'string' } },
    resources: [],
  })}\n`
}

/** Calls of one bearer on one instance, the JSON body parsed when there is one. */
export interface Answer {
  status: number
  headers: Headers
  text: string
  body: Record<string, unknown>
}

/** `fetch` on an instance with a bearer token (none when null) and an optional JSON body. */
export async function call(
  server: { readonly url: string },
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...(token === null ? {} : { Authorization: `Bearer ${token}` }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })
  const text = await response.text()
  let parsed: Record<string, unknown> = {}
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>)
  } catch {
    // Not JSON: the text is there for the assertion's message.
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

/** Polls `probe` (sync or async) until it answers true, failing after `timeoutMs` with `what`. */
export async function until(
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (
      await Promise.resolve()
        .then(probe)
        .catch(() => false)
    )
      return
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The same path on another instance: what a load balancer does with a URL one instance issued. */
export function onInstance(url: string, server: RunningServer): string {
  const parsed = new URL(url)
  return `${server.url}${parsed.pathname}${parsed.search}`
}
