import { appendFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import {
  CairnApiError,
  TokenExchangeError,
  type ExchangedToken,
  type Me,
  type TokenPair,
} from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { Credentials, type Profile } from '../config/credentials'
import { LOCAL_SERVER, lookUpServer } from '../config/server-url'
import { saveTerraformToken } from '../config/terraform-credentials'
import { ciIdToken } from '../login/ci-token'
import { openContext, type Context } from '../context'
import { loginWithProvider } from '../login/oidc-login'
import { identityLines } from '../output/identity'
import { shown } from '../output/shown'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'login',
    description: 'Log in to a Cairn server through its OpenID provider, or with a token',
  },
  args: {
    ...common,
    'token-stdin': {
      type: 'boolean',
      description: 'log in with an API token read from standard input instead of a browser',
    },
    token: {
      type: 'string',
      description: 'log in with this API token (--token-stdin keeps it out of the command line)',
    },
    browser: {
      type: 'boolean',
      default: true,
      description: 'start a browser for the login; --no-browser only prints the URL',
    },
    port: { type: 'string', description: 'the loopback port for the login redirect' },
    timeout: { type: 'string', description: 'seconds to wait for the browser login (default 300)' },
    ci: {
      type: 'boolean',
      description:
        "in a CI job: exchange its OIDC ID token (GitHub Actions, GitLab CI's id_tokens, CAIRN_ID_TOKEN) under a trust policy, and save the token for Terraform",
    },
    audience: {
      type: 'string',
      description:
        "with --ci: the audience to ask GitHub Actions for (the trust policy's; default: the server's URL)",
    },
    'id-token-var': {
      type: 'string',
      description:
        'with --ci: the variable holding the ID token (GitLab CI: the name under id_tokens:)',
    },
  },
  async run({ args }) {
    if (args.ci === true) {
      await ciLogin(args)
      return
    }
    if (args['token-stdin'] === true && args.token !== undefined) {
      throw new UsageError('give --token or --token-stdin, not both')
    }
    const given = args['token-stdin'] === true ? await readStdin() : args.token?.trim()
    if (given === '') throw new UsageError('the token is empty')
    if (given !== undefined && /\s/.test(given)) {
      throw new UsageError('the token holds white space: give it alone')
    }
    const named = await lookUpServer(args.server, process.env, new Credentials())
    const context = await openContext(args, process.env, { orLocal: true })
    if (named.kind === 'none') {
      context.out.note(
        `No server named and none logged in to: logging in to ${LOCAL_SERVER}, the one npm start runs (give --server <URL> for another).`,
      )
    }
    // Remembered for this server, so later commands trust its CA without --ca-file.
    const caFile = args['ca-file'] === undefined ? {} : { ca_file: resolve(args['ca-file']) }
    if (given !== undefined) {
      // Saved only once the server has accepted it (GET /v1/auth/me).
      const me = await verify(context.connect(given).auth.me(), context.server)
      await save(context, { access_token: given, ...caFile }, me)
      return
    }
    const anonymous = context.connect()
    const config = await anonymous.auth.config()
    if (config.mode === 'local') {
      throw new CLIError(
        `${context.server} has no OpenID provider (local mode): log in with a token: cairn login --server ${context.server} --token-stdin < data/admin.token (the admin token the server keeps in its data directory; an API token works too)`,
      )
    }
    if (config.mode === 'disabled') {
      throw new CLIError(
        `${context.server} runs with authentication disabled: there is nothing to log in to`,
      )
    }
    const idToken = await loginWithProvider({
      config,
      ...(args.port === undefined ? {} : { port: wholeNumber(args.port, '--port') }),
      noBrowser: !args.browser,
      timeoutMs: (args.timeout === undefined ? 300 : wholeNumber(args.timeout, '--timeout')) * 1000,
      say: (text) => {
        context.out.note(text)
      },
      fetch: context.fetch,
    })
    const pair: TokenPair = await anonymous.auth.exchange(idToken)
    const me = await verify(context.connect(pair.access_token).auth.me(), context.server)
    await save(
      context,
      { access_token: pair.access_token, refresh_token: pair.refresh_token, ...caFile },
      me,
    )
  },
})

/**
 * `cairn login --ci`: the job's OIDC ID token for a Cairn token under a trust policy (DESIGN
 * section 17), kept as the login (for `cairn` and `cairn creds`) and for Terraform: in
 * `~/.terraform.d/credentials.tfrc.json` for the `cloud` block, and in GitHub Actions as
 * `TF_HTTP_PASSWORD` for the steps after (masked in the log).
 */
async function ciLogin(args: {
  server?: string | undefined
  'ca-file'?: string | undefined
  json?: boolean | undefined
  audience?: string | undefined
  'id-token-var'?: string | undefined
}): Promise<void> {
  const context = await openContext(args, process.env, { orLocal: true })
  const audience = args.audience ?? context.server
  const job = await ciIdToken(process.env, {
    audience,
    variable: args['id-token-var'],
    fetch: context.fetch,
  })
  let exchanged: ExchangedToken
  try {
    exchanged = await context.connect().trustPolicies.exchange(job.token)
  } catch (error) {
    if (error instanceof TokenExchangeError) throw new CLIError(error.message)
    throw error
  }
  const token = exchanged.access_token
  const github = process.env['GITHUB_ACTIONS'] === 'true'
  // Before anything else is printed: the runner hides the token from the log from here on.
  if (github) process.stdout.write(`::add-mask::${token}\n`)
  const me = await verify(context.connect(token).auth.me(), context.server)
  const caFile = args['ca-file'] === undefined ? {} : { ca_file: resolve(args['ca-file']) }
  await save(context, { access_token: token, ...caFile }, me)
  const saved = await saveTerraformToken(context.server, token)
  const environment = process.env['GITHUB_ENV'] ?? ''
  if (github && environment !== '') await appendFile(environment, `TF_HTTP_PASSWORD=${token}\n`)
  context.out.note(
    [
      `The token of ${job.from} was exchanged: it ends in ${String(exchanged.expires_in)} s.`,
      `Terraform's cloud block finds it in ${saved}; cairn creds gives S3 credentials with it.`,
      github && environment !== ''
        ? 'The next steps have it as TF_HTTP_PASSWORD for the http backend.'
        : 'For the http backend: export TF_HTTP_PASSWORD="$(cairn auth token)"',
    ].join('\n'),
  )
}

/**
 * Keeps the login and makes its server the default (as `gh auth login` makes the new account the
 * active one), saying so when another server was used before; then says who the token is, its
 * roles, limit and expiry.
 */
async function save(context: Context, profile: Profile, me: Me): Promise<void> {
  const { credentials, server } = context
  const before = await credentials.defaultServer()
  const others = Object.keys(await credentials.all()).filter((url) => url !== server)
  await credentials.set(server, profile)
  await credentials.setDefault(server)
  context.out.result({ server, default: true, ...me }, () =>
    [
      shown`Logged in to ${server} as ${me.subject}${me.email === null ? '' : ` (${me.email})`}.`,
      ...identityLines(me, new Date(), '  '),
    ].join('\n'),
  )
  const previous = before ?? (others.length === 1 ? others[0] : undefined)
  if (previous !== undefined && previous !== server) {
    context.out.note(
      shown`Commands now use ${server} when none is named (cairn auth switch ${previous} goes back).`,
    )
  }
}

/** Who the server says the token is; a token it refuses is a failure of its own, not "log in". */
async function verify(asking: Promise<Me>, server: string): Promise<Me> {
  try {
    return await asking
  } catch (error) {
    if (error instanceof CairnApiError && error.status === 401) {
      throw new CLIError(
        `${server} refused the token (401 ${error.code}): it is mistyped, expired or revoked; nothing was saved`,
      )
    }
    throw error
  }
}

function wholeNumber(text: string, flag: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number`)
  return Number(text)
}

/** The token piped in, trimmed (a file's last newline, a paste's spaces). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    process.stderr.write('Reading the token from standard input; end with Ctrl-D.\n')
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8').trim()
}
