import { CairnApiError, CertificateError, createClient, type Me } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError } from '../../cli-error'
import { Credentials } from '../../config/credentials'
import { lookUpServer } from '../../config/server-url'
import { ORIGIN_TEXT, tokenSources, type TokenOrigin } from '../../config/token-sources'
import { fetchFor } from '../../context'
import { identityLines } from '../../output/identity'
import { Output } from '../../output/output'
import { shown } from '../../output/shown'
import { common } from '../_shared'

/** What one way of getting a token gave, checked against the server's `GET /v1/auth/me`. */
interface CredentialCheck {
  origin: TokenOrigin
  ok: boolean
  /** The one commands send: the first that works, in the order they are tried. */
  used: boolean
  identity?: Me
  error?: { status?: number; code?: string; message: string }
}

/** One server: its default flag, the CA file its login remembered, and each token checked. */
interface ServerStatus {
  server: string
  default: boolean
  ca_file: string | null
  ok: boolean
  credentials: CredentialCheck[]
  error?: { message: string }
}

export default defineCommand({
  meta: {
    name: 'status',
    description:
      'Check the credentials for each server logged in to (or the one named): who they are, how they were obtained, roles, limit and expiry',
  },
  args: { ...common },
  async run({ args }) {
    const out = new Output(args.json === true)
    const credentials = new Credentials()
    const named = await lookUpServer(args.server, process.env, credentials)
    const explicit = args.server !== undefined || (process.env['SVC_SERVER_URL'] ?? '') !== ''
    // The one commands use when none is named: the default, or the only login.
    const fallback = await lookUpServer(undefined, { SVC_SERVER_URL: '' }, credentials)
    const preferred = fallback.kind === 'chosen' ? fallback.server : undefined
    const servers =
      explicit && named.kind === 'chosen'
        ? [named.server]
        : Object.keys(await credentials.all()).sort()
    if (servers.length === 0) {
      throw new CLIError(
        'not logged in to any server: run cairn login --server <URL> (cairn auth status --server <URL> checks the credentials Terraform or CAIRN_TOKEN give for one)',
      )
    }
    const statuses: ServerStatus[] = []
    for (const server of servers) {
      statuses.push(await check(server, args, credentials, server === preferred))
    }
    out.result({ servers: statuses }, () => statuses.map(render).join('\n\n'))
    const failing = statuses.filter((status) => !status.ok).map((status) => status.server)
    if (failing.length > 0) {
      throw new CLIError(
        `the credentials for ${failing.join(', ')} do not work or cannot be checked (see above): run cairn login --server ${failing[0] ?? ''}`,
      )
    }
  },
})

/** Asks the server who each token is, in the order commands try them. */
async function check(
  server: string,
  args: { 'ca-file'?: string | undefined },
  credentials: Credentials,
  isDefault: boolean,
): Promise<ServerStatus> {
  const profile = await credentials.get(server)
  const base = { server, default: isDefault, ca_file: profile?.ca_file ?? null }
  let doFetch: typeof fetch
  try {
    doFetch = await fetchFor(args, process.env, profile)
  } catch (error) {
    return { ...base, ok: false, credentials: [], error: { message: failure(error).message } }
  }
  const sources = await tokenSources({
    server,
    env: process.env,
    credentials,
    profile,
    fetch: doFetch,
  })
  const checks: CredentialCheck[] = []
  for (const source of sources) {
    const client = createClient({ baseUrl: server, token: source.provider, fetch: doFetch })
    try {
      const identity = await client.auth.me()
      checks.push({ origin: source.origin, ok: true, used: false, identity })
    } catch (error) {
      checks.push({ origin: source.origin, ok: false, used: false, error: failure(error) })
    }
  }
  const used = checks.find((item) => item.ok)
  if (used !== undefined) used.used = true
  return {
    ...base,
    ok: used !== undefined,
    credentials: checks,
    ...(checks.length === 0
      ? { error: { message: `not logged in: run cairn login --server ${server}` } }
      : {}),
  }
}

/** What went wrong, as the server said it (status and code) or as the connection failed. */
function failure(error: unknown): NonNullable<CredentialCheck['error']> {
  if (error instanceof CairnApiError) {
    const why =
      error.status === 401
        ? 'the token is mistyped, expired or revoked'
        : error.status === 403
          ? 'the token works but may not read who it is'
          : error.message
    return { status: error.status, code: error.code, message: why }
  }
  if (error instanceof CertificateError) {
    return {
      message: `cannot trust the certificate of ${error.server} (${error.reason}): give its CA with --ca-file`,
    }
  }
  return { message: error instanceof Error ? error.message : String(error) }
}

function render(status: ServerStatus): string {
  const lines = [shown`${status.server}${status.default ? ' (default)' : ''}`]
  if (status.error !== undefined) lines.push(shown`  ${status.error.message}`)
  const used = status.credentials.find((item) => item.used)
  if (used?.identity !== undefined) {
    const me = used.identity
    lines.push(
      shown`  logged in as ${me.subject}${me.email === null ? '' : ` (${me.email})`}, with ${ORIGIN_TEXT[used.origin]}`,
      ...identityLines(me, new Date(), '  '),
    )
  }
  if (status.ca_file !== null) lines.push(shown`  ${'CA file'.padEnd(8)} ${status.ca_file}`)
  for (const item of status.credentials) {
    if (item.used) continue
    lines.push(
      item.ok
        ? shown`  also works: ${ORIGIN_TEXT[item.origin]}, as ${item.identity?.subject ?? '?'}`
        : shown`  ${used === undefined ? 'refused' : 'also tried, refused'}: ${ORIGIN_TEXT[item.origin]}: ${errorText(item.error)}`,
    )
  }
  return lines.join('\n')
}

function errorText(error: CredentialCheck['error']): string {
  if (error === undefined) return 'failed'
  const head = error.status === undefined ? '' : `${error.status} ${error.code ?? ''} `
  return `${head.trimEnd()}${head === '' ? '' : ': '}${error.message}`
}
