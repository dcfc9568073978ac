import {
  ApiTokenListSchema,
  AuthConfigSchema,
  CreatedApiTokenSchema,
  MeSchema,
  S3CredentialSetSchema,
  TokenPairSchema,
  type ApiToken,
  type AuthConfig,
  type CreatedApiToken,
  type Me,
  type S3CredentialSet,
  type TokenLimit,
  type TokenPair,
} from '@cairn/contract'
import type { Transport } from './transport'

/** `/v1/auth`: login discovery, exchanges and refreshes, and who you are. */
export class AuthApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  /** How to log in: the OpenID provider, client ID and redirect URIs (no token needed). */
  config(): Promise<AuthConfig> {
    return this.#transport.json('GET', '/v1/auth/config', AuthConfigSchema, { anonymous: true })
  }

  /** Trades an ID token from the provider for Cairn's access and refresh tokens. */
  exchange(idToken: string): Promise<TokenPair> {
    return this.#transport.json('POST', '/v1/auth/exchange', TokenPairSchema, {
      anonymous: true,
      body: { json: { id_token: idToken } },
    })
  }

  /** Spends a refresh token for a new pair; the old refresh token stops working. */
  refresh(refreshToken: string): Promise<TokenPair> {
    return this.#transport.json('POST', '/v1/auth/token', TokenPairSchema, {
      anonymous: true,
      body: { json: { refresh_token: refreshToken } },
    })
  }

  me(): Promise<Me> {
    return this.#transport.json('GET', '/v1/auth/me', MeSchema)
  }

  /**
   * S3 session credentials for the `/s3` endpoint, in the JSON an AWS `credential_process`
   * prints: valid for the server's access-token lifetime at most, and never longer, nor for more,
   * than the token this client presents.
   */
  issueS3Credentials(): Promise<S3CredentialSet> {
    return this.#transport.json('POST', '/v1/auth/issue-s3-creds', S3CredentialSetSchema)
  }
}

/** `/v1/auth/tokens`: named API tokens for CI and Terraform. */
export class TokensApi {
  readonly #transport: Transport

  constructor(transport: Transport) {
    this.#transport = transport
  }

  async list(): Promise<ApiToken[]> {
    return (await this.#transport.json('GET', '/v1/auth/tokens', ApiTokenListSchema)).tokens
  }

  /**
   * Creates a token; its secret is in the answer and nowhere else, ever. With `limit` it may do
   * only what that role grants on that scope (a CI job that may only write `team/app/*`), and
   * never more than you.
   */
  create(
    name: string,
    options: { expiresIn?: number; limit?: TokenLimit } = {},
  ): Promise<CreatedApiToken> {
    return this.#transport.json('POST', '/v1/auth/tokens', CreatedApiTokenSchema, {
      body: {
        json: {
          name,
          ...(options.expiresIn === undefined ? {} : { expires_in: options.expiresIn }),
          ...(options.limit === undefined
            ? {}
            : { scope: options.limit.scope, role: options.limit.role }),
        },
      },
    })
  }

  async revoke(id: string): Promise<void> {
    await this.#transport.send('DELETE', `/v1/auth/tokens/${encodeURIComponent(id)}`)
  }
}
