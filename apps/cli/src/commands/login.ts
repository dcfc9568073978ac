import { CairnApiError, type Me, type TokenPair } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { loginWithProvider } from '../login/oidc-login'
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
  },
  async run({ args }) {
    const context = await openContext(args)
    if (args['token-stdin'] === true && args.token !== undefined) {
      throw new UsageError('give --token or --token-stdin, not both')
    }
    const given = args['token-stdin'] === true ? await readStdin() : args.token?.trim()
    if (given !== undefined) {
      if (given === '') throw new UsageError('the token is empty')
      if (/\s/.test(given)) throw new UsageError('the token holds white space: give it alone')
      // Saved only once the server has accepted it (GET /v1/auth/me).
      const me = await verify(context.connect(given).auth.me(), context.server)
      await context.credentials.set(context.server, { access_token: given })
      context.out.result(
        { server: context.server, subject: me.subject },
        () => shown`Logged in to ${context.server} as ${me.subject}.`,
      )
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
    await context.credentials.set(context.server, {
      access_token: pair.access_token,
      refresh_token: pair.refresh_token,
    })
    context.out.result(
      { server: context.server, subject: me.subject, email: me.email },
      () =>
        shown`Logged in to ${context.server} as ${me.subject}${me.email === null ? '' : ` (${me.email})`}.`,
    )
  },
})

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
