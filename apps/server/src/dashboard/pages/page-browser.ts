import { expect } from 'vitest'
import type { InProcessApp } from '../../testing/in-process'

/** The origin the in-process app answers on, which a same-site post names. */
export const ORIGIN = 'http://localhost'

/** Where `signIn` lands, to read the signed-in session's CSRF token. */
const TOKENS = '/app/settings/tokens'

/** An answer as a browser sees it: its status, its headers and its page. */
export interface Seen {
  status: number
  headers: Headers
  html: string
}

/** A browser of the in-process app: it keeps the session cookie and the last page's CSRF token. */
export class Browser {
  cookie = ''
  csrf = ''

  constructor(private readonly fixture: InProcessApp) {}

  async get(path: string): Promise<Seen> {
    return this.#keep(await this.fixture.request(path, { headers: { Cookie: this.cookie } }))
  }

  async post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = { Origin: ORIGIN },
  ): Promise<Seen> {
    const answer = await this.fixture.request(path, {
      method: 'POST',
      headers: {
        Cookie: this.cookie,
        'Content-Type': 'application/x-www-form-urlencoded',
        ...headers,
      },
      body: new URLSearchParams({ csrf: this.csrf, ...fields }).toString(),
    })
    return this.#keep(answer)
  }

  /** Signs in with a pasted token, then reads a page for the signed-in session's CSRF token. */
  async signIn(token: string): Promise<void> {
    await this.get('/app/login')
    expect((await this.post('/app/login', { token, next: TOKENS })).status).toBe(303)
    await this.get(TOKENS)
  }

  async #keep(answer: Response): Promise<Seen> {
    // As a browser does: of several cookies of one name in an answer, the last one holds.
    for (const set of answer.headers.getSetCookie()) {
      const session = /^cairn_session=([^;]*)/.exec(set)?.[1]
      if (session !== undefined) this.cookie = `cairn_session=${session}`
    }
    const html = await answer.text()
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1]
    if (csrf !== undefined) this.csrf = csrf
    return { status: answer.status, headers: answer.headers, html }
  }
}
