import { CLIError, UsageError } from '../cli-error'
import type { Credentials } from './credentials'

/** The server `npm start` runs: where `cairn login` goes when nothing names another. */
export const LOCAL_SERVER = 'http://localhost:8080'

/** Which server a command line names, or why it names none. */
export type ServerLookup =
  { kind: 'chosen'; server: string } | { kind: 'none' } | { kind: 'several'; servers: string[] }

/**
 * The server a command line names: `--server`, else `SVC_SERVER_URL`, else the default of the
 * credentials file (`cairn auth switch`, the last `cairn login`), else the only server logged in
 * to. Never a server nobody named: with several logins and no default, or none, it says so.
 */
export async function lookUpServer(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  credentials: Credentials,
): Promise<ServerLookup> {
  const chosen = flag ?? (env['SVC_SERVER_URL'] === '' ? undefined : env['SVC_SERVER_URL'])
  if (chosen !== undefined) {
    return {
      kind: 'chosen',
      server: normalizeServer(chosen, flag === undefined ? 'SVC_SERVER_URL' : '--server'),
    }
  }
  const preferred = await credentials.defaultServer()
  if (preferred !== undefined) return { kind: 'chosen', server: preferred }
  const saved = Object.keys(await credentials.all())
  if (saved.length === 1) return { kind: 'chosen', server: saved[0] as string }
  return saved.length === 0 ? { kind: 'none' } : { kind: 'several', servers: saved.sort() }
}

/**
 * The server to talk to, as `lookUpServer` finds it. With several logins and no default, a
 * usage error naming them and `cairn auth switch`; with none, a failure naming `cairn login`,
 * unless `orLocal` (for `cairn login` itself, whose first use is often the server `npm start`
 * runs on this machine, and which says where it logged in).
 */
export async function resolveServer(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  credentials: Credentials,
  options: { orLocal?: boolean } = {},
): Promise<string> {
  const found = await lookUpServer(flag, env, credentials)
  switch (found.kind) {
    case 'chosen':
      return found.server
    case 'several':
      throw new UsageError(
        `logged in to ${found.servers.length} servers (${found.servers.join(', ')}) and none is the default: give --server <URL> or SVC_SERVER_URL, or choose one with cairn auth switch <URL>`,
      )
    case 'none':
      if (options.orLocal === true) return LOCAL_SERVER
      throw new CLIError(
        'not logged in to any server: run cairn login --server <URL> first, or name the server with --server <URL> or SVC_SERVER_URL',
      )
  }
}

/** A server URL as profiles key it: `http(s)://host[:port][/path]`, without a trailing slash. */
export function normalizeServer(url: string, from: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new UsageError(
      `${from} ${JSON.stringify(url)} is not a URL such as https://cairn.example.com`,
    )
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new UsageError(`${from} must be an http or https URL`)
  }
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, '')}`
}
