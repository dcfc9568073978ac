import { createClient, fetchTrusting, type CairnClient, type TokenProvider } from '@cairn/sdk'
import { caCertificates } from './config/ca-file'
import { Credentials, type Profile } from './config/credentials'
import { LocksFile } from './config/locks-file'
import { resolveServer } from './config/server-url'
import { tokenSources, type TokenSource } from './config/token-sources'
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
  /** What `cairn login` saved for the server, if anything. */
  profile: Profile | undefined
  /** Where its tokens come from, in the order they are tried. */
  sources: TokenSource[]
  /** What requests go through: one that trusts `--ca-file` when it is given, else the global fetch. */
  fetch: typeof fetch
  /** A client of the same server, trusting the same CAs, with this token or none. */
  connect(token?: string | TokenProvider): CairnClient
  /** The lock ID given on the command line, or the one `cairn unit lock` took for the unit. */
  lockFor(unit: string, given: string | undefined): Promise<string | undefined>
}

export interface ContextArgs {
  server?: string | undefined
  json?: boolean | undefined
  'ca-file'?: string | undefined
}

let routed: typeof fetch | undefined
let opened: { server: string; loggedIn: boolean } | undefined

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
 * The server the last context opened talks to, and whether it had credentials for it, to name
 * them in advice; undefined before one is opened.
 */
export function contextInUse(): { server: string; loggedIn: boolean } | undefined {
  return opened
}

/**
 * Resolves the server (`resolveServer`: never one nobody named, except for `cairn login` with
 * `orLocal`) and its credentials (`tokenSources`), and trusts the CA file given, or the one the
 * login to that server remembered.
 */
export async function openContext(
  args: ContextArgs,
  env: NodeJS.ProcessEnv = process.env,
  options: { orLocal?: boolean } = {},
): Promise<Context> {
  const credentials = new Credentials(env)
  const server = await resolveServer(args.server, env, credentials, options)
  opened = { server, loggedIn: false }
  const profile = await credentials.get(server)
  const doFetch = await fetchFor(args, env, profile)
  const sources = await tokenSources({ server, env, credentials, profile, fetch: doFetch })
  opened = { server, loggedIn: sources.length > 0 }
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
    profile,
    sources,
  }
}

/** What requests to a server go through: one trusting its CA file when there is one. */
export async function fetchFor(
  args: ContextArgs,
  env: NodeJS.ProcessEnv,
  profile: Profile | undefined,
): Promise<typeof fetch> {
  const ca = await caCertificates(args['ca-file'], env, profile?.ca_file)
  return routed ?? (ca === undefined ? fetch : fetchTrusting(ca))
}

/** Uses the first source; when the server refuses it and it cannot refresh, moves to the next. */
function firstThatWorks(sources: TokenSource[]): TokenProvider {
  let index = 0
  return {
    token: () => sources[index]?.provider.token(),
    refresh: async () => {
      const fresh = await sources[index]?.provider.refresh?.()
      if (fresh !== undefined) return fresh
      index += 1
      return sources[index]?.provider.token()
    },
  }
}
