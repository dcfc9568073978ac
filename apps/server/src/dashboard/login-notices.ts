/**
 * What the sign-in page may say about the last attempt, by code: `/app/login?error=<code>`. The
 * page shows only these sentences, never text from the URL, so a link cannot make a genuine page
 * of this server say what its author wants. An unknown code shows nothing.
 */
export const LOGIN_NOTICES = {
  form_expired: 'The form expired: try again.',
  token_invalid: 'That token is not valid here.',
  session_ended: 'Your session has ended: sign in again.',
  other_browser: 'This sign-in was started in another browser or has expired.',
  provider_refused: 'The identity provider did not sign you in.',
  no_provider: 'No OpenID provider is configured.',
} as const

export type LoginNotice = keyof typeof LOGIN_NOTICES

/** The sentence for a code from the URL, or undefined for anything else. */
export function loginNoticeText(code: string | undefined): string | undefined {
  return code !== undefined && Object.hasOwn(LOGIN_NOTICES, code)
    ? LOGIN_NOTICES[code as LoginNotice]
    : undefined
}
