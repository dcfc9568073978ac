import type { SignedRequest } from '../src/index'

/**
 * Reads a request written as lines (`GET /path?query HTTP/1.1`, `Name:value`, an indented
 * continuation line, an empty line, the body) into what a server would receive. Repeated headers are
 * joined by ',' as Node does; a continuation line is kept after a newline (obs-fold).
 */
export function parseRawRequest(lines: readonly string[]): {
  request: SignedRequest
  body: string
} {
  const [requestLine = '', ...rest] = lines
  const method = requestLine.slice(0, requestLine.indexOf(' '))
  const target = requestLine.slice(method.length + 1, requestLine.lastIndexOf(' '))
  const question = target.indexOf('?')
  const headers: Record<string, string> = {}
  let last: string | undefined
  let index = 0
  for (; index < rest.length; index++) {
    const line = rest[index] ?? ''
    if (line === '') break
    if (/^[ \t]/.test(line) && last !== undefined) {
      headers[last] = `${headers[last] ?? ''}\n${line}`
      continue
    }
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).toLowerCase()
    const value = line.slice(colon + 1)
    headers[name] = name in headers ? `${headers[name] ?? ''},${value}` : value
    last = name
  }
  return {
    request: {
      method,
      path: question === -1 ? target : target.slice(0, question),
      query: question === -1 ? '' : target.slice(question + 1),
      headers,
    },
    body: rest.slice(index + 1).join('\n'),
  }
}
