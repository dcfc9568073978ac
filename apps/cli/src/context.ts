import {
  createClient,
  fetchTrusting,
  refreshingTokens,
  staticToken,
  type CairnClient,
  type TokenProvider,
} from '@cairn/sdk'
import { caCertificates } from './config/ca-file'
import { Credentials } from './config/credentials'
import { LocksFile } from './config/locks-file'
import { resolveServer } from './config/server-url'
import { terraformToken } from './config/terraform-credentials'
import { Output } from './output/output'

/** What every command works with: the server, a client with the right credentials, the output. */
export interface Context {
  server: string
  client: CairnClient
  out: Output
  credentials: Credentials
  locks: LocksFile
  /** Whether any credentials were found for the server. */
  loggedIn: boolean
  /** What requests go through: one that trusts `--ca-file` when it is given, else the global fetch. */
  fetch: typeof fetch
  /** A client of the same server, trusting the same CAs, with this token or none. */
  connect(token?: string): CairnClient
  /** The lock ID given on the command line, or the one `cairn unit lock` took for the unit. */
  lockFor(unit: string, given: string | undefined): Promise<string | undefined>
}

export interface ContextArgs {
  server?: string | undefined
  json?: boolean | undefined
  'ca-file'?: string | undefined
}

let routed: typeof fetch | undefined

/**
 * Sends the requests of every context opened from now on through `send` instead of the network,
 * or through the network again when it is undefined: tests point it at a server app in process.
 * `main` never calls it.
 * @internal
 */
export function routeRequestsThrough(send: typeof fetch | undefined): void {
  routed = send
}

/**
 * Resolves the server and its credentials (DESIGN section 12): the token `terraform login` saved
 * for the host is tried first, then the CLI's own profile, refreshed when its access token is
 * near expiry or refused.
 */
export async function openContext(
  args: ContextArgs,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Context> {
  const credentials = new Credentials(env)
  const server = await resolveServer(args.server, env, credentials)
  const ca = await caCertificates(args['ca-file'], env)
  const doFetch = routed ?? (ca === undefined ? fetch : fetchTrusting(ca))
  const sources: TokenProvider[] = []
  const fromTerraform = await terraformToken(server, env)
  if (fromTerraform !== undefined) sources.push(staticToken(fromTerraform))
  const profile = await credentials.get(server)
  if (profile !== undefined) {
    sources.push(
      profile.refresh_token === undefined
        ? staticToken(profile.access_token)
        : refreshingTokens({
            baseUrl: server,
            accessToken: profile.access_token,
            refreshToken: profile.refresh_token,
            fetch: doFetch,
            onRotate: (pair) =>
              credentials.set(server, {
                access_token: pair.access_token,
                refresh_token: pair.refresh_token,
              }),
          }),
    )
  }
  const locks = new LocksFile(env)
  const connect = (token?: string | TokenProvider): CairnClient =>
    createClient({
      baseUrl: server,
      ...(token === undefined ? {} : { token }),
      fetch: doFetch,
      userAgent: 'cairn-cli',
    })
  return {
    server,
    lockFor: async (unit, given) => given ?? (await locks.get(server, unit)),
    client: connect(sources.length === 0 ? undefined : firstThatWorks(sources)),
    fetch: doFetch,
    connect,
    out: new Output(args.json === true),
    credentials,
    locks,
    loggedIn: sources.length > 0,
  }
}

/** Uses the first source; when the server refuses it and it cannot refresh, moves to the next. */
function firstThatWorks(sources: TokenProvider[]): TokenProvider {
  let index = 0
  return {
    token: () => sources[index]?.token(),
    refresh: async () => {
      const fresh = await sources[index]?.refresh?.()
      if (fresh !== undefined) return fresh
      index += 1
      return sources[index]?.token()
    },
  }
}
