import { describe, expect, it } from 'vitest'

import { CookieJar } from './cookie-jar'

function responseSetting(...cookies: string[]): Response {
  return new Response(null, { headers: cookies.map((cookie) => ['set-cookie', cookie]) })
}

describe('CookieJar', () => {
  it('sends a cookie only under its Path, longest path first', () => {
    const jar = new CookieJar()
    jar.store(
      'http://127.0.0.1:3000/auth',
      responseSetting('_session=s; path=/; httponly', '_interaction=i; path=/interaction/abc'),
    )
    expect(jar.header('http://127.0.0.1:3000/interaction/abc')).toBe('_interaction=i; _session=s')
    expect(jar.header('http://127.0.0.1:3000/interaction/abc/login')).toBe(
      '_interaction=i; _session=s',
    )
    expect(jar.header('http://127.0.0.1:3000/interaction/abcd')).toBe('_session=s')
    expect(jar.header('http://127.0.0.1:3000/auth/abc')).toBe('_session=s')
  })

  it('defaults the Path to the directory of the request', () => {
    const jar = new CookieJar()
    jar.store('http://127.0.0.1:3000/a/b/page', responseSetting('c=1'))
    expect(jar.header('http://127.0.0.1:3000/a/b/other')).toBe('c=1')
    expect(jar.header('http://127.0.0.1:3000/a/other')).toBeUndefined()
  })

  it('keeps cookies to the host that set them', () => {
    const jar = new CookieJar()
    jar.store('http://127.0.0.1:3000/', responseSetting('c=1; path=/'))
    expect(jar.header('http://127.0.0.1:3001/')).toBeUndefined()
  })

  it('forgets a cookie that is expired by Expires or Max-Age', () => {
    const jar = new CookieJar()
    const url = 'http://127.0.0.1:3000/'
    jar.store(url, responseSetting('a=1; path=/', 'b=2; path=/', 'c=3; path=/'))
    expect(jar.names(url)).toEqual(['a', 'b', 'c'])
    jar.store(
      url,
      responseSetting('a=; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT', 'b=; path=/; max-age=0'),
    )
    expect(jar.names(url)).toEqual(['c'])
  })

  it('lets Max-Age win over Expires', () => {
    const jar = new CookieJar()
    const url = 'http://127.0.0.1:3000/'
    jar.store(
      url,
      responseSetting('a=1; path=/; expires=Thu, 01 Jan 1970 00:00:00 GMT; max-age=60'),
    )
    expect(jar.header(url)).toBe('a=1')
  })

  it('sends Secure cookies over https only', () => {
    const jar = new CookieJar()
    jar.store('https://localhost:8443/', responseSetting('s=1; path=/; secure'))
    expect(jar.header('https://localhost:8443/')).toBe('s=1')
    expect(jar.header('http://localhost:8443/')).toBeUndefined()
  })

  it('replaces a cookie of the same name and path', () => {
    const jar = new CookieJar()
    const url = 'http://127.0.0.1:3000/'
    jar.store(url, responseSetting('a=1; path=/'))
    jar.store(url, responseSetting('a=2; path=/'))
    expect(jar.header(url)).toBe('a=2')
  })
})
