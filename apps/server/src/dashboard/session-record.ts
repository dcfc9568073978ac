import * as v from 'valibot'

/**
 * What the dashboard's sealed session cookie holds (`session.ts` seals, reads and refreshes it):
 * apart from it, so that the request's variables (`http/app-env.ts`) can name a session without
 * importing the code that handles one.
 */

/**
 * What a post did, for the page it sends the browser to: carried by the sealed session and shown
 * once, never by the URL, where anyone could write one into a link.
 */
const NoticeSchema = v.object({ text: v.string(), error: v.boolean() })
export type Notice = v.InferOutput<typeof NoticeSchema>

export const SessionSchema = v.variant('kind', [
  /** Not signed in: only the CSRF token of the forms shown before signing in. */
  v.object({ kind: v.literal('visitor'), csrf: v.string(), notice: v.optional(NoticeSchema) }),
  /**
   * Signed in with a pasted API token, under a login of its own (`AuthService.startLogin`) that
   * signing out ends in the store, so that a copy of the cookie opens nothing afterwards.
   */
  v.object({
    kind: v.literal('token'),
    csrf: v.string(),
    token: v.string(),
    /** The session's login: a refresh-token family that hands out no token. */
    login: v.string(),
    /** When the session ends (epoch ms), whatever is written into the cookie meanwhile. */
    expires: v.number(),
    notice: v.optional(NoticeSchema),
  }),
  /** Signed in through the OpenID provider: Cairn's access and refresh tokens. */
  v.object({
    kind: v.literal('oidc'),
    csrf: v.string(),
    access: v.string(),
    refresh: v.string(),
    /** When the access token expires (epoch ms). */
    expires: v.number(),
    notice: v.optional(NoticeSchema),
  }),
])
export type Session = v.InferOutput<typeof SessionSchema>
