import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Clock } from '@cairn/core'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'

/** A minimal OpenID provider on 127.0.0.1: discovery, a JWKS, and ID tokens signed on request. */
export interface IdProvider {
  /** `http://127.0.0.1:<port>` */
  issuer: string
  /** An ID token for `subject`, for `clientId`, issued now by `clock`. */
  idToken(subject: string, claims?: Record<string, unknown>): Promise<string>
  close(): Promise<void>
}

/**
 * Starts one. It serves what `OidcClient.verifyIdToken` reads over HTTP (OpenID Connect Discovery
 * 1.0 and the JWKS), so a test exchanges a real signed ID token without the full provider.
 */
export async function startIdProvider(clientId: string, clock: Clock): Promise<IdProvider> {
  const { privateKey, publicKey } = await generateKeyPair('ES256')
  const jwk = { ...(await exportJWK(publicKey)), kid: 'p1', alg: 'ES256', use: 'sig' }
  let issuer = ''
  const server = createServer((request, response) => {
    const body =
      request.url === '/.well-known/openid-configuration'
        ? {
            issuer,
            authorization_endpoint: `${issuer}/authorize`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
          }
        : request.url === '/jwks'
          ? { keys: [jwk] }
          : undefined
    response.writeHead(body === undefined ? 404 : 200, { 'Content-Type': 'application/json' })
    response.end(JSON.stringify(body ?? { error: 'not_found' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    issuer,
    idToken: (subject, claims = {}) => {
      const now = Math.floor(clock.now() / 1000)
      return new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'p1' })
        .setIssuer(issuer)
        .setAudience(clientId)
        .setSubject(subject)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(privateKey)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          resolve()
        })
      }),
  }
}
