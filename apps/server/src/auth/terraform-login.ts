import { AuthError, type AuthService, type Identity, type Sealer } from '@cairn/auth'
import * as v from 'valibot'

/** An authorization code lives five minutes (DESIGN section 8), and works once. */
const CODE_TTL_MS = 5 * 60 * 1000
/** How long a person has to answer local mode's sign-in page before Terraform must ask again. */
const REQUEST_TTL_MS = 15 * 60 * 1000

/** What `terraform login` asked `/oauth/authorization` for, kept sealed while a person answers. */
const RequestSchema = v.object({
  kind: v.literal('terraform-login'),
  client: v.string(),
  redirect: v.string(),
  state: v.string(),
  challenge: v.string(),
})

export interface TerraformLoginRequest {
  /** `client_id`, given back at the token endpoint. */
  client: string
  /** Terraform's loopback `redirect_uri` (checked before it was sealed). */
  redirect: string
  /** Terraform's `state`, given back with the code. */
  state: string
  /** The PKCE S256 challenge (RFC 7636) the code is bound to. */
  challenge: string
}

/**
 * The authorization codes of `terraform login` (terraform-wire.md A4), for both ways a person
 * proves who they are: the OpenID provider, and in local mode the sign-in page where they paste
 * an API token or confirm the dashboard session they have (`/app/login/terraform`). A code is an
 * EdDSA JWT of its own kind, bound to the client, the redirect URI and the PKCE challenge; the
 * token endpoint spends it once (`UsedCodes`). Nothing is kept between the steps but sealed
 * requests and signed codes, so any instance serves any step.
 */
export class TerraformLogins {
  readonly #auth: AuthService
  readonly #sealer: Sealer

  constructor(auth: AuthService, sealer: Sealer) {
    this.#auth = auth
    this.#sealer = sealer
  }

  /** Seals a local-mode request for the sign-in page. */
  seal(request: TerraformLoginRequest): string {
    return this.#sealer.seal({ kind: 'terraform-login', ...request }, REQUEST_TTL_MS)
  }

  /** @throws AuthError `invalid_request` for a request that is not one, or has expired */
  open(sealed: string): TerraformLoginRequest {
    const parsed = v.safeParse(RequestSchema, this.#sealer.open(sealed))
    if (!parsed.success) throw new AuthError('invalid_request', 'Invalid or expired state')
    const { kind: _kind, ...request } = parsed.output
    return request
  }

  /**
   * A code for `identity`. `apiToken` is the ID of the API token a person proved in local mode:
   * the token endpoint checks it again and mints Terraform's token from it, so the new token keeps
   * its limit and its expiry and dies with it.
   */
  code(
    identity: Identity,
    request: Pick<TerraformLoginRequest, 'client' | 'redirect' | 'challenge'>,
    apiToken?: string,
  ): Promise<string> {
    return this.#auth.jwt.sign(
      'code',
      identity.subject,
      {
        client_id: request.client,
        redirect_uri: request.redirect,
        code_challenge: request.challenge,
        idp: identity.issuer,
        ...(identity.email === undefined ? {} : { email: identity.email }),
        groups: identity.groups,
        ...(apiToken === undefined ? {} : { tok: apiToken }),
      },
      CODE_TTL_MS,
    )
  }
}

/** Terraform's redirect URI with the code, or with an error, and its state (RFC 6749 4.1.2). */
export function backToTerraform(
  request: Pick<TerraformLoginRequest, 'redirect' | 'state'>,
  answer: { code: string } | { error: 'access_denied' },
): string {
  const back = new URL(request.redirect)
  back.search = new URLSearchParams({ ...answer, state: request.state }).toString()
  return back.toString()
}
