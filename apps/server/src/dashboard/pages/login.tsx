import { CsrfField, Notice, Page } from '../view/layout'

/**
 * The sign-in page: through the OpenID provider when one is configured, and by pasting an API
 * token in any mode (a local server's admin token, a token made for the purpose).
 */
export function LoginPage(props: {
  csrf: string
  next: string
  oidc: boolean
  /** Local mode: where the administrator's token is kept. */
  adminTokenFile: { path: string; shared: boolean } | undefined
  error: string | undefined
}) {
  return (
    <Page title="Sign in">
      <h1>Sign in to Cairn</h1>
      <Notice text={props.error} error />
      <div class="grid">
        {props.oidc ? (
          <section class="panel" aria-labelledby="with-provider">
            <h2 id="with-provider">With your identity provider</h2>
            <p>You are sent to your organisation’s sign-in page, then back here.</p>
            <p>
              <a
                class="button"
                href={`/app/login/oidc?${new URLSearchParams({ next: props.next }).toString()}`}
              >
                Sign in with your identity provider
              </a>
            </p>
          </section>
        ) : null}
        <section class="panel" aria-labelledby="with-token">
          <h2 id="with-token">With an API token</h2>
          {props.adminTokenFile === undefined ? null : (
            <p class="muted">
              This server runs in local mode: <AdminTokenFile file={props.adminTokenFile} />
            </p>
          )}
          <form method="post" action="/app/login">
            <CsrfField csrf={props.csrf} />
            <input type="hidden" name="next" value={props.next} />
            <p>
              <label>
                API token
                <input
                  name="token"
                  type="password"
                  autocomplete="off"
                  required
                  placeholder="svc_tfe_…"
                />
              </label>
            </p>
            <button type="submit">Sign in</button>
          </form>
        </section>
      </div>
    </Page>
  )
}

/** Where local mode keeps the administrator's token, as a sentence of the sign-in pages. */
export function AdminTokenFile({ file }: { file: { path: string; shared: boolean } }) {
  return (
    <>
      its administrator’s token is in the file <code>{file.path}</code> on the server
      {file.shared ? ' that started first of those sharing this storage' : ''}, printed when it
      first started.
    </>
  )
}
