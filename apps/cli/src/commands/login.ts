import { createClient, type TokenPair } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { loginWithProvider } from '../login/oidc-login'
import { common } from './_shared'

export default defineCommand({
  meta: {
    name: 'login',
    description: 'Log in to a Cairn server through its OpenID provider, or with a token',
  },
  args: {
    ...common,
    token: { type: 'string', description: 'log in with this API token instead of a browser' },
    'token-stdin': { type: 'boolean', description: 'read the API token from standard input' },
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
    const anonymous = createClient({ baseUrl: context.server, userAgent: 'cairn-cli' })
    const given = args['token-stdin'] === true ? (await readStdin()).trim() : args.token
    if (given !== undefined) {
      if (given === '') throw new UsageError('the token is empty')
      const me = await createClient({ baseUrl: context.server, token: given }).auth.me()
      await context.credentials.set(context.server, { access_token: given })
      context.out.result(
        { server: context.server, subject: me.subject },
        () => `Logged in to ${context.server} as ${me.subject}.`,
      )
      return
    }
    const config = await anonymous.auth.config()
    if (config.mode === 'local') {
      throw new CLIError(
        `${context.server} has no OpenID provider (local mode): log in with a token: cairn login --server ${context.server} --token <token> (the admin token is in the server's data directory, admin.token)`,
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
    })
    const pair: TokenPair = await anonymous.auth.exchange(idToken)
    await context.credentials.set(context.server, {
      access_token: pair.access_token,
      refresh_token: pair.refresh_token,
    })
    const me = await createClient({ baseUrl: context.server, token: pair.access_token }).auth.me()
    context.out.result(
      { server: context.server, subject: me.subject, email: me.email },
      () =>
        `Logged in to ${context.server} as ${me.subject}${me.email === null ? '' : ` (${me.email})`}.`,
    )
  },
})

function wholeNumber(text: string, flag: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number`)
  return Number(text)
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
