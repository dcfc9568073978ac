import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose'

/**
 * A stand-in for a CI platform's OIDC issuer, for tests: there is no CI platform on these
 * machines. It publishes a discovery document and a JWKS on 127.0.0.1, mints job tokens with the
 * claims a test gives (GitHub Actions' or GitLab CI's documented ones), and answers GitHub
 * Actions' token request (`ACTIONS_ID_TOKEN_REQUEST_URL` with `&audience=`, the runner's bearer)
 * with `requestClaims()` and the audience asked for.
 */
export interface CiIssuer {
  /** The issuer: tokens' `iss`, and where discovery is. */
  readonly url: string
  /** `ACTIONS_ID_TOKEN_REQUEST_URL` as a GitHub runner sets it. */
  readonly requestUrl: string
  /** `ACTIONS_ID_TOKEN_REQUEST_TOKEN`. */
  readonly requestBearer: string
  /** The issuer's public key as its JWKS lists it. */
  readonly publicJwk: JWK
  /** A job token signed by the issuer (or another `key`, `kid`, `alg`). */
  mint(
    claims: Record<string, unknown>,
    options?: { kid?: string; key?: CryptoKey; alg?: string },
  ): Promise<string>
  /** The JWKS answers after `ms` milliseconds; -1: the connection is dropped. */
  delayJwks(ms: number): void
  close(): Promise<void>
}

export interface CiIssuerOptions {
  /** The claims GitHub's token request answers with, besides `aud` (default: none offered). */
  requestClaims?: () => Record<string, unknown>
  /** The signing algorithm (RS256 unless told). */
  alg?: 'RS256' | 'ES256'
}

const KID = 'ci-issuer-1'
const REQUEST_BEARER = 'runner-request-token'

export async function startCiIssuer(options: CiIssuerOptions = {}): Promise<CiIssuer> {
  const alg = options.alg ?? 'RS256'
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid: KID, alg, use: 'sig' }
  let delay = 0
  let url = ''
  const mint: CiIssuer['mint'] = (claims, signing = {}) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: signing.alg ?? alg, kid: signing.kid ?? KID, typ: 'JWT' })
      .sign(signing.key ?? privateKey)
  const server: Server = createServer((request, response) => {
    const asked = new URL(request.url ?? '/', url)
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body))
    }
    if (asked.pathname === '/.well-known/openid-configuration') {
      json(200, { issuer: url, jwks_uri: `${url}/.well-known/jwks` })
    } else if (asked.pathname === '/.well-known/jwks') {
      if (delay < 0) {
        request.socket.destroy()
        return
      }
      setTimeout(() => {
        json(200, { keys: [publicJwk] })
      }, delay)
    } else if (
      asked.pathname === '/token-request' &&
      options.requestClaims !== undefined &&
      request.headers.authorization === `bearer ${REQUEST_BEARER}`
    ) {
      const audience = asked.searchParams.get('audience') ?? url
      void mint({ ...options.requestClaims(), aud: audience }).then((value) => {
        json(200, { count: value.length, value })
      })
    } else json(404, {})
  })
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening))
  url = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`
  return {
    url,
    requestUrl: `${url}/token-request?api-version=2.0`,
    requestBearer: REQUEST_BEARER,
    publicJwk,
    mint,
    delayJwks: (ms) => {
      delay = ms
    },
    close: () =>
      new Promise((closed) => {
        server.closeAllConnections()
        server.close(() => {
          closed()
        })
      }),
  }
}
