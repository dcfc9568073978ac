import { Hono } from 'hono'
import type { AuthMode } from '../auth/identity-setup'
import type { AppEnv } from '../http/app-env'

/** What a person can do to get a token, in each mode. */
const STEPS: Record<AuthMode, string[]> = {
  local: [
    'This server runs in local mode: its administrator holds the token in <code>&lt;data-dir&gt;/admin.token</code>.',
    'Paste that token, or better, one made for the purpose: <code>cairn tokens create terraform</code> (logged in with <code>cairn login --token-stdin &lt; data/admin.token</code>), or <code>curl -X POST -H "Authorization: Bearer $ADMIN_TOKEN" -d \'{"name": "terraform"}\' BASE/v1/auth/tokens</code>.',
  ],
  oidc: [
    'Log in with <code>cairn login --server BASE</code>, which opens your identity provider, then make a token: <code>cairn tokens create terraform</code>.',
    'The token is shown once; paste it at Terraform’s prompt, or set <code>TF_TOKEN_&lt;host&gt;</code> in CI.',
  ],
  disabled: [
    'This server runs with authentication disabled (development only): Terraform may paste any token at all.',
  ],
}

/**
 * The page `terraform login` names for making a token by hand (`/app/settings/tokens`, as HCP
 * Terraform's): until the dashboard exists, it says how to make one with the CLI or the API.
 */
export function tokensPageRoutes(mode: AuthMode, baseUrl: (request: Request) => string) {
  const app = new Hono<AppEnv>()
  app.get('/app/settings/tokens', (c) => {
    const base = escapeHtml(baseUrl(c.req.raw))
    const steps = STEPS[mode].map((step) => `<li>${step.replaceAll('BASE', base)}</li>`).join('\n')
    c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
    c.header('X-Content-Type-Options', 'nosniff')
    return c.html(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Cairn: API tokens</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:3rem auto;padding:0 1rem}code{background:#f2f2f2;padding:0 .2em}</style>
</head>
<body>
<h1>API tokens</h1>
<p>Terraform asks for a token of this Cairn server. To make one:</p>
<ol>
${steps}
</ol>
<p>List and revoke tokens with <code>cairn tokens ls</code> and <code>cairn tokens revoke &lt;id&gt;</code>, or <code>GET</code> and <code>DELETE ${base}/v1/auth/tokens</code>.</p>
</body>
</html>
`)
  })
  return app
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}
