import { AuthError, type AuthService, type Identity } from '@cairn/auth'
import { Hono, type Context } from 'hono'
import { ExchangeRequestSchema, RefreshRequestSchema, type Me } from '@cairn/contract'
import type { AuthMode } from '../auth/identity-setup'
import { CreateApiTokenRequestSchema } from '../auth/token-request'
import type { AuthSettings } from '../config/auth-settings'
import { noteAudit } from '../audit/audit-trail'
import type { AppEnv } from '../http/app-env'
import { authenticate } from '../http/authenticate'
import { readJsonObject, SMALL_BODY_BYTES } from '../http/body'
import { validate } from '@cairn/core'

export interface AuthRoutesDeps {
  auth: AuthService
  mode: AuthMode
  config: AuthSettings
}

/**
 * Login and tokens (service spec, Management authentication endpoints; DESIGN section 8):
 * `/v1/auth/*`, the JWKS at `/oidc/jwks.json` and `/oauth/debug`.
 */
export function authRoutes(deps: AuthRoutesDeps): Hono<AppEnv> {
  const { auth, config } = deps
  const app = new Hono<AppEnv>()
  const json = (c: Context<AppEnv>) => readJsonObject(c, SMALL_BODY_BYTES)
  const caller = (c: Context<AppEnv>): Identity => c.var.principal

  app.get('/v1/auth/config', async (c) => {
    const oidc = auth.oidc
    if (oidc === undefined) {
      return c.json({
        mode: deps.mode,
        issuer: null,
        client_id: null,
        redirect_uris: [],
        scopes: [],
      })
    }
    const metadata = await oidc.metadata().catch((error: unknown) => {
      // Explicit endpoints still let a client start a login while discovery is failing.
      if (config.authUrl !== undefined && config.tokenUrl !== undefined) return undefined
      throw error
    })
    return c.json({
      mode: deps.mode,
      issuer: oidc.issuer,
      client_id: oidc.clientId,
      authorization_endpoint: metadata?.authorizationEndpoint ?? config.authUrl,
      token_endpoint: metadata?.tokenEndpoint ?? config.tokenUrl,
      redirect_uris: config.redirectUris,
      scopes: config.scopes.split(' ').filter((scope) => scope !== ''),
    })
  })

  app.post('/v1/auth/exchange', async (c) => {
    const body = validate(ExchangeRequestSchema, await json(c))
    const { pair, identity } = await auth.exchange(body.id_token)
    c.set('principal', identity)
    c.var.log.info('login', { subject: identity.subject })
    return c.json(pair)
  })

  app.post('/v1/auth/token', async (c) => {
    const body = validate(RefreshRequestSchema, await json(c))
    return c.json(await auth.refresh(body.refresh_token))
  })

  app.get('/v1/auth/me', (c) => c.json(meOf(caller(c))))

  // S3 session credentials for `credential_process` (DESIGN section 11): the session token is an
  // access JWT for `s3` alone, bounded by the caller's token; the secret is derived, not stored.
  app.post('/v1/auth/issue-s3-creds', async (c) => {
    if (deps.mode === 'disabled') {
      throw new AuthError(
        'invalid_request',
        'authentication is disabled on this server: /s3 accepts requests without credentials',
      )
    }
    const creds = await auth.s3.issue(caller(c))
    c.var.log.info('S3 credentials issued', {
      subject: caller(c).subject,
      access_key_id: creds.AccessKeyId,
      expires: creds.Expiration,
    })
    c.header('Cache-Control', 'no-store')
    return c.json(creds)
  })

  app.get('/v1/auth/tokens', async (c) => c.json({ tokens: await auth.listApiTokens(caller(c)) }))

  app.post('/v1/auth/tokens', async (c) => {
    const body = validate(CreateApiTokenRequestSchema, await json(c))
    const created = await auth.createApiToken(caller(c), body.name, {
      ...(body.expires_in === undefined ? {} : { expiresInSeconds: body.expires_in }),
      ...(body.scope === undefined || body.role === undefined
        ? {}
        : { limit: { scope: body.scope, role: body.role } }),
    })
    noteAudit(c, {
      detail: {
        token_id: created.id,
        token_name: created.name,
        ...(created.limit === null ? {} : { scope: created.limit.scope, role: created.limit.role }),
      },
    })
    c.var.log.info('API token created', {
      token_id: created.id,
      subject: created.subject,
      ...(created.limit === null ? {} : { scope: created.limit.scope, role: created.limit.role }),
    })
    return c.json(created, 201)
  })

  app.delete('/v1/auth/tokens/:id', async (c) => {
    const revoked = await auth.revokeApiToken(caller(c), c.req.param('id'))
    c.var.log.info('API token revoked', { token_id: revoked.id, by: caller(c).subject })
    return c.body(null, 204)
  })

  app.get('/oidc/jwks.json', (c) => {
    c.header('Cache-Control', 'public, max-age=300')
    return c.json(auth.jwks())
  })

  // What the server believes about its identity setup, for an administrator who debugs a login.
  // It holds no secret, but says enough about the setup (whether ID tokens are checked at all,
  // the provider's endpoints and state, the signing keys, the lifetimes) that it is no page for
  // anyone who can reach the server: a token of an administrator opens it (401 without a token,
  // 403 for anyone else); what a client needs to log in stays open at /v1/auth/config.
  app.use('/oauth/debug', authenticate(deps.mode === 'disabled' ? undefined : auth))
  app.get('/oauth/debug', async (c) => {
    if (deps.mode !== 'disabled' && !(await auth.isAdministrator(caller(c)))) {
      throw new AuthError(
        'forbidden',
        `${caller(c).subject} may not read the identity setup: that takes an administrator`,
      )
    }
    const oidc = auth.oidc
    return c.json({
      mode: deps.mode,
      issuer: config.issuer ?? null,
      client_id: config.clientId ?? null,
      client_secret_set: config.clientSecret !== undefined,
      auth_url: config.authUrl ?? null,
      token_url: config.tokenUrl ?? null,
      base_url: config.publicBaseUrl ?? null,
      dev_skip_verify: config.devSkipVerify,
      provider: oidc?.status() ?? null,
      signing_kids: auth.jwks().keys.map((key) => (key as { kid?: string }).kid ?? null),
      access_ttl_seconds: config.accessTtlMs / 1000,
      refresh_ttl_seconds: config.refreshTtlMs / 1000,
    })
  })

  return app
}

/**
 * Who the caller is and what the token presented is: how it was obtained, when it expires, its
 * limit. `roles` say what this token may do: a narrower token's are its limit's role, never the
 * owner's wider ones (an admin's token limited to `reader` is a reader's).
 */
function meOf(me: Identity): Me {
  const presented = me.origin?.presented
  const apiToken = me.origin?.apiToken
  return {
    subject: me.subject,
    email: me.email ?? null,
    groups: me.groups,
    roles: me.limit === undefined ? me.roles : [me.limit.role],
    issuer: me.issuer,
    // No token was presented with authentication disabled: nothing to say about one.
    ...(presented === undefined
      ? {}
      : {
          token: {
            kind: presented.kind,
            ...(apiToken === undefined ? {} : { id: apiToken.id, name: apiToken.name }),
            expires:
              presented.expires === undefined ? null : new Date(presented.expires).toISOString(),
            limit: me.limit === undefined ? null : { role: me.limit.role, scope: me.limit.scope },
            ...(apiToken?.ci === undefined ? {} : { ci: apiToken.ci }),
          },
        }),
  }
}
