import { refreshingTokens, staticToken, type TokenProvider } from '@cairn/sdk'
import type { Credentials, Profile } from './credentials'
import { terraformToken } from './terraform-credentials'

/**
 * How a token came to the CLI: `CAIRN_TOKEN` in the environment, the file `terraform login`
 * writes, a `cairn login` through the server's provider (with a refresh token), or a token given
 * to `cairn login --token`.
 */
export type TokenOrigin = 'env' | 'terraform' | 'login' | 'pasted'

/** One place a token for a server may come from, in the order they are tried. */
export interface TokenSource {
  origin: TokenOrigin
  provider: TokenProvider
}

/** For people: how each kind of token was obtained. */
export const ORIGIN_TEXT: Record<TokenOrigin, string> = {
  env: 'CAIRN_TOKEN in the environment',
  terraform: "terraform login's credentials file (~/.terraform.d/credentials.tfrc.json)",
  login: 'cairn login through the OpenID provider (refreshed as it expires)',
  pasted: 'a token given to cairn login',
}

/**
 * The tokens there are for `server`, in the order they are tried (DESIGN section 12, with the
 * environment first, as `GH_TOKEN` is for gh): `CAIRN_TOKEN`, then the token `terraform login`
 * saved for the host, then the CLI's own profile, refreshed when its access token is near expiry
 * or refused (each new pair saved at once).
 */
export async function tokenSources(options: {
  server: string
  env: NodeJS.ProcessEnv
  credentials: Credentials
  profile: Profile | undefined
  fetch: typeof fetch
}): Promise<TokenSource[]> {
  const { server, env, credentials, profile } = options
  const sources: TokenSource[] = []
  const fromEnv = env['CAIRN_TOKEN']?.trim()
  if (fromEnv !== undefined && fromEnv !== '') {
    sources.push({ origin: 'env', provider: staticToken(fromEnv) })
  }
  const fromTerraform = await terraformToken(server, env)
  if (fromTerraform !== undefined) {
    sources.push({ origin: 'terraform', provider: staticToken(fromTerraform) })
  }
  if (profile !== undefined) {
    sources.push(
      profile.refresh_token === undefined
        ? { origin: 'pasted', provider: staticToken(profile.access_token) }
        : {
            origin: 'login',
            provider: refreshingTokens({
              baseUrl: server,
              accessToken: profile.access_token,
              refreshToken: profile.refresh_token,
              fetch: options.fetch,
              onRotate: (pair) =>
                credentials.set(server, {
                  access_token: pair.access_token,
                  refresh_token: pair.refresh_token,
                }),
            }),
          },
    )
  }
  return sources
}
