import { UsageError } from '../cli-error'
import type { Credentials } from './credentials'

export const DEFAULT_SERVER = 'http://localhost:8080'

/**
 * The server to talk to (DESIGN section 12): `--server`, else `SVC_SERVER_URL`, else the only
 * saved profile, else `http://localhost:8080`. Written without a trailing slash.
 */
export async function resolveServer(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  credentials: Credentials,
): Promise<string> {
  const chosen = flag ?? (env['SVC_SERVER_URL'] === '' ? undefined : env['SVC_SERVER_URL'])
  if (chosen !== undefined)
    return normalize(chosen, flag === undefined ? 'SVC_SERVER_URL' : '--server')
  const saved = Object.keys(await credentials.all())
  return saved.length === 1 ? (saved[0] as string) : DEFAULT_SERVER
}

function normalize(url: string, from: string): string {
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
