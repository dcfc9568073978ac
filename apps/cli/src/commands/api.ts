import { createReadStream } from 'node:fs'
import { access } from 'node:fs/promises'
import { STATUS_CODES } from 'node:http'
import { Readable, Writable } from 'node:stream'
import { jsonWithVisibleControls, visibleText, type RequestOptions } from '@cairn/sdk'
import { defineCommand } from 'citty'
import { CLIError, UsageError } from '../cli-error'
import { openContext } from '../context'
import { common } from './_shared'
import { repeated } from './unit/dependency-arg'

const METHOD = /^[A-Za-z]+$/

export default defineCommand({
  meta: {
    name: 'api',
    description:
      'Send an authenticated request to the server and print the answer (as gh api does)',
  },
  args: {
    method: {
      type: 'positional',
      description: 'the HTTP method: GET, POST, PUT, PATCH, DELETE, ...',
      required: true,
    },
    route: {
      type: 'positional',
      description: 'the path on the server, such as /v1/units or /v1/units/team/app?x=y',
      required: true,
    },
    server: common.server,
    'ca-file': common['ca-file'],
    field: {
      type: 'string',
      alias: 'F',
      description:
        'key=value, repeatable: true, false, null and numbers as JSON, anything else as a string; in the JSON body, or the query of a GET',
      valueHint: 'key=value',
    },
    'raw-field': {
      type: 'string',
      alias: 'f',
      description: 'key=value, repeatable, the value always a string',
      valueHint: 'key=value',
    },
    input: {
      type: 'string',
      description: 'send this file as the body (- for standard input); fields go to the query',
      valueHint: 'file',
    },
    header: {
      type: 'string',
      alias: 'H',
      description: "'Name: value', repeatable: a header to send",
      valueHint: 'header',
    },
    include: {
      type: 'boolean',
      alias: 'i',
      description: 'print the status line and the headers of the answer before its body',
    },
    paginate: {
      type: 'boolean',
      description:
        'GET every page of a /v1 listing (following next_cursor) and print them as one JSON value',
    },
  },
  async run({ args, rawArgs }) {
    if (!METHOD.test(args.method)) {
      throw new UsageError(`${args.method} is not an HTTP method such as GET or POST`)
    }
    const method = args.method.toUpperCase()
    const path = routeOf(args.route)
    const fields = {
      ...fieldsOf(repeated(rawArgs, 'raw-field', ['f']), false),
      ...fieldsOf(repeated(rawArgs, 'field', ['F']), true),
    }
    const headers = headersOf(repeated(rawArgs, 'header', ['H']))
    if (args.paginate === true && method !== 'GET') {
      throw new UsageError('--paginate follows the pages of a GET: give GET')
    }
    const inQuery = method === 'GET' || method === 'HEAD' || args.input !== undefined
    if (inQuery && method === 'GET' && args.input !== undefined) {
      throw new UsageError('a GET sends no body: drop --input, or give another method')
    }
    const options: RequestOptions = {
      headers,
      ...(inQuery
        ? { query: asQuery(fields) }
        : Object.keys(fields).length > 0
          ? { body: { json: fields } }
          : {}),
      ...(args.input === undefined ? {} : { body: { stream: await bodyOf(args.input) } }),
    }
    const context = await openContext(args)
    const pretty = process.stdout.isTTY
    if (args.paginate === true) {
      await printPages(context.client.request.bind(context.client), path, options, pretty)
      return
    }
    const response = await context.client.request(method, path, options)
    if (args.include === true) process.stdout.write(head(response))
    await printBody(response, pretty)
    failIfRefused(method, path, response)
  },
})

/** The route as a path on the chosen server: the token is never sent anywhere else. */
function routeOf(route: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(route) || route.startsWith('//')) {
    throw new UsageError(
      `${route} is not a path on the server: give one such as /v1/units (the server is --server's, or the default one)`,
    )
  }
  return route.startsWith('/') ? route : `/${route}`
}

function fieldsOf(pairs: string[], typed: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const pair of pairs) {
    const equals = pair.indexOf('=')
    if (equals <= 0) throw new UsageError(`${pair} is not a field: write key=value`)
    const value = pair.slice(equals + 1)
    fields[pair.slice(0, equals)] = typed ? typedValue(value) : value
  }
  return fields
}

/** As `gh api -F`: true, false, null and numbers become JSON values; the rest stays a string. */
function typedValue(text: string): unknown {
  if (text === 'true') return true
  if (text === 'false') return false
  if (text === 'null') return null
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text)
  return text
}

function asQuery(fields: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)]))
}

function headersOf(lines: string[]): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim()
    if (colon <= 0 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new UsageError(`${line} is not a header: write 'Name: value'`)
    }
    headers[name] = line.slice(colon + 1).trim()
  }
  return headers
}

/** The file (or standard input) as a stream, sent as it is read. */
async function bodyOf(input: string): Promise<ReadableStream<Uint8Array>> {
  if (input === '-') return Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>
  try {
    await access(input)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new CLIError(`cannot read --input ${input} (${code})`)
  }
  return Readable.toWeb(createReadStream(input)) as ReadableStream<Uint8Array>
}

/** `HTTP/1.1 200 OK` and each header, then an empty line, as `curl -i` and `gh api -i` print. */
function head(response: Response): string {
  const reason =
    response.statusText !== '' ? response.statusText : (STATUS_CODES[response.status] ?? '')
  const lines = [`HTTP/1.1 ${response.status} ${reason}`.trimEnd()]
  response.headers.forEach((value, name) => lines.push(`${name}: ${value}`))
  return `${lines.map((line) => visibleText(line)).join('\n')}\n\n`
}

/**
 * The body as the server sent it when stdout is a file or a pipe; on a terminal, JSON indented and
 * any other text with its control characters written out (`\x1b`), so none acts on the terminal.
 */
async function printBody(response: Response, pretty: boolean): Promise<void> {
  if (response.body === null) return
  if (!pretty) {
    await response.body.pipeTo(Writable.toWeb(process.stdout) as WritableStream<Uint8Array>, {
      preventClose: true,
    })
    return
  }
  const text = await response.text()
  process.stdout.write(`${prettyText(text, response.headers.get('Content-Type'))}\n`)
}

function prettyText(text: string, type: string | null): string {
  if (type?.includes('json') === true) {
    try {
      return jsonWithVisibleControls(JSON.stringify(JSON.parse(text), null, 2))
    } catch {
      // Not JSON after all: shown as text.
    }
  }
  return visibleText(text)
}

/**
 * Every page of a `/v1` listing: each answer's lists joined to the ones before, the other fields
 * from the last page, `next_cursor` null at the end; printed as one JSON value.
 */
async function printPages(
  request: (method: string, path: string, options: RequestOptions) => Promise<Response>,
  path: string,
  options: RequestOptions,
  pretty: boolean,
): Promise<void> {
  let joined: Record<string, unknown> | undefined
  let cursor: string | undefined
  do {
    const response = await request('GET', path, {
      ...options,
      query: { ...options.query, ...(cursor === undefined ? {} : { cursor }) },
    })
    if (!response.ok) {
      await printBody(response, pretty)
      failIfRefused('GET', path, response)
    }
    const page: unknown = await response.json().catch(() => undefined)
    if (typeof page !== 'object' || page === null || Array.isArray(page)) {
      throw new CLIError(`GET ${path} answered no JSON object: --paginate needs a /v1 listing`)
    }
    joined = join(joined, page as Record<string, unknown>)
    const next = (page as { next_cursor?: unknown }).next_cursor
    cursor = typeof next === 'string' && next !== '' ? next : undefined
  } while (cursor !== undefined)
  const text = JSON.stringify(joined, null, pretty ? 2 : undefined)
  process.stdout.write(`${pretty ? jsonWithVisibleControls(text) : text}\n`)
}

function join(
  before: Record<string, unknown> | undefined,
  page: Record<string, unknown>,
): Record<string, unknown> {
  if (before === undefined) return page
  const joined: Record<string, unknown> = { ...before, ...page }
  for (const [key, value] of Object.entries(page)) {
    const earlier = before[key]
    if (Array.isArray(value) && Array.isArray(earlier)) {
      joined[key] = [...(earlier as unknown[]), ...(value as unknown[])]
    }
  }
  return joined
}

/** Exit 1 on an HTTP error, once the body is printed, naming the status and the server's code. */
function failIfRefused(method: string, path: string, response: Response): void {
  if (response.status < 400) return
  throw new CLIError(`${method} ${path} answered HTTP ${response.status}`)
}
