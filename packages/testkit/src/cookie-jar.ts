// A small RFC 6265 cookie jar for fetch: host-only cookies, Path matching, Max-Age and Expires.
// Enough to carry an OpenID provider's session through redirects as a browser would.

interface StoredCookie {
  name: string
  value: string
  host: string
  path: string
  secure: boolean
  /** Epoch milliseconds; Infinity for a session cookie. */
  expiresAt: number
}

export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>()

  /** Stores the Set-Cookie headers of a response to a request for `requestUrl`. */
  store(requestUrl: string | URL, response: Response): void {
    const url = new URL(requestUrl)
    for (const header of response.headers.getSetCookie()) {
      this.#storeOne(url, header)
    }
  }

  /** The Cookie header value a browser would send to `url`, or undefined when it sends none. */
  header(requestUrl: string | URL): string | undefined {
    const url = new URL(requestUrl)
    const now = Date.now()
    const matching: StoredCookie[] = []
    for (const [key, cookie] of this.#cookies) {
      if (cookie.expiresAt <= now) {
        this.#cookies.delete(key)
        continue
      }
      if (cookie.host !== url.host) continue
      if (cookie.secure && url.protocol !== 'https:') continue
      if (!pathMatches(url.pathname, cookie.path)) continue
      matching.push(cookie)
    }
    if (matching.length === 0) return undefined
    // Longer paths first (RFC 6265 5.4).
    matching.sort((a, b) => b.path.length - a.path.length)
    return matching.map((cookie) => `${cookie.name}=${cookie.value}`).join('; ')
  }

  /** Names of the cookies that would be sent to `url` (for assertions in tests). */
  names(requestUrl: string | URL): string[] {
    const header = this.header(requestUrl)
    if (header === undefined) return []
    return header.split('; ').map((pair) => pair.slice(0, pair.indexOf('=')))
  }

  clear(): void {
    this.#cookies.clear()
  }

  #storeOne(url: URL, header: string): void {
    const [pair = '', ...attributes] = header.split(';')
    const eq = pair.indexOf('=')
    if (eq <= 0) return
    const name = pair.slice(0, eq).trim()
    const value = pair.slice(eq + 1).trim()

    let path = defaultPath(url.pathname)
    let secure = false
    let maxAge: number | undefined
    let expires: number | undefined
    for (const attribute of attributes) {
      const aeq = attribute.indexOf('=')
      const key = (aeq === -1 ? attribute : attribute.slice(0, aeq)).trim().toLowerCase()
      const attrValue = aeq === -1 ? '' : attribute.slice(aeq + 1).trim()
      switch (key) {
        case 'path':
          if (attrValue.startsWith('/')) path = attrValue
          break
        case 'secure':
          secure = true
          break
        case 'max-age': {
          const seconds = Number.parseInt(attrValue, 10)
          if (Number.isFinite(seconds)) maxAge = seconds
          break
        }
        case 'expires': {
          const at = Date.parse(attrValue)
          if (Number.isFinite(at)) expires = at
          break
        }
        default:
          // Domain, HttpOnly and SameSite change nothing for a single-host test client.
          break
      }
    }

    // Max-Age wins over Expires (RFC 6265 5.3 step 3).
    const expiresAt =
      maxAge !== undefined ? Date.now() + maxAge * 1000 : (expires ?? Number.POSITIVE_INFINITY)
    const key = `${url.host};${path};${name}`
    if (expiresAt <= Date.now()) {
      this.#cookies.delete(key)
      return
    }
    this.#cookies.set(key, { name, value, host: url.host, path, secure, expiresAt })
  }
}

/** RFC 6265 5.1.4 default-path. */
function defaultPath(pathname: string): string {
  if (!pathname.startsWith('/')) return '/'
  const last = pathname.lastIndexOf('/')
  return last <= 0 ? '/' : pathname.slice(0, last)
}

/** RFC 6265 5.1.4 path-match. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true
  if (!requestPath.startsWith(cookiePath)) return false
  return cookiePath.endsWith('/') || requestPath.charAt(cookiePath.length) === '/'
}
