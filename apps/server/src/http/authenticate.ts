import { TOKEN_VERIFICATION_FAILED, TokenVerificationError, type AuthService } from '@cairn/auth'
import type { MiddlewareHandler } from 'hono'
import type { AppEnv } from './app-env'
import { HttpError } from './errors'
import { ANONYMOUS } from './principal'

/** Routes under `/v1` that a caller reaches before it has a token: the login itself. */
const PUBLIC = new Set(['/v1/auth/config', '/v1/auth/exchange', '/v1/auth/token'])
/** Where agents call, with their own tokens (`routes/agent.ts`). */
const AGENT_ROUTES = '/v1/agent/'

/**
 * Sets the calling principal for `/v1`: from `Authorization: Bearer <token>`, or from the
 * password of `Authorization: Basic` (Terraform's http backend can send nothing else). The token
 * may be a Cairn access JWT or an opaque API token. With authentication disabled every caller is
 * `anonymous`.
 */
export function authenticate(auth: AuthService | undefined): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (auth === undefined) {
      c.set('principal', ANONYMOUS)
      await next()
      return
    }
    // The agents' routes take agent tokens, and only those: they check them themselves.
    if (PUBLIC.has(c.req.path) || c.req.path.startsWith(AGENT_ROUTES)) {
      await next()
      return
    }
    const token = credentialOf(c.req.header('authorization'))
    if (token === undefined) {
      throw new HttpError(
        'unauthorized',
        'this needs a token: send Authorization: Bearer <token>',
        CHALLENGE,
      )
    }
    try {
      const identity = await auth.authenticate(token)
      c.set('principal', identity)
    } catch (error) {
      if (!(error instanceof TokenVerificationError)) throw error
      // The reason goes to the log; the client gets the spec's message and nothing more.
      c.var.log.info('token refused', { reason: error.reason })
      throw new HttpError('unauthorized', TOKEN_VERIFICATION_FAILED, CHALLENGE)
    }
    await next()
  }
}

const CHALLENGE = { 'WWW-Authenticate': 'Bearer realm="cairn", Basic realm="cairn"' }

function credentialOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  const match = /^(Bearer|Basic)\s+(\S+)\s*$/i.exec(header)
  if (match === null) return undefined
  const [, scheme, value] = match as unknown as [string, string, string]
  if (scheme.toLowerCase() === 'bearer') return value
  const decoded = Buffer.from(value, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  const password = colon === -1 ? '' : decoded.slice(colon + 1)
  return password === '' ? undefined : password
}
