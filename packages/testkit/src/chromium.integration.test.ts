import { createServer, type Server, type ServerResponse } from 'node:http'

import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import { launchBrowser } from './chromium'
import { freePort } from './free-port'
import { watchPage } from './page-watch'

/** Long enough for a first run that installs Chromium with apt-get. */
const LAUNCH_HOOK_TIMEOUT_MS = 10 * 60_000

/** The policy the dashboard is meant to serve: scripts from the origin, nothing else at all. */
const CSP = "default-src 'none'; script-src 'self'"

const PAGES: Record<string, string> = {
  '/violating': `<!doctype html>
<html><head><title>violating</title></head>
<body><p id="status">inline script blocked</p>
<script>document.getElementById('status').textContent = 'inline script ran'</script>
</body></html>`,
  '/clean': `<!doctype html>
<html><head><title>clean</title><script src="/clean.js" defer></script></head>
<body><p id="status">waiting for the script</p>
<form method="post" action="/submit">
<input name="unit" id="unit"><input name="note" id="note"><button type="submit">Save</button>
</form></body></html>`,
  '/clean.js': `document.getElementById('status').textContent = 'script from the origin ran'`,
}

let server: Server
let origin: string
const submissions: URLSearchParams[] = []

function send(response: ServerResponse, type: string, body: string): void {
  response.writeHead(200, { 'content-type': type, 'content-security-policy': CSP })
  response.end(body)
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/'
    if (request.method === 'POST' && path === '/submit') {
      let body = ''
      request.setEncoding('utf8')
      request.on('data', (chunk: string) => (body += chunk))
      request.on('end', () => {
        submissions.push(new URLSearchParams(body))
        send(
          response,
          'text/html; charset=utf-8',
          '<!doctype html><title>saved</title><p>saved</p>',
        )
      })
      return
    }
    const page = PAGES[path]
    if (page === undefined) {
      response.writeHead(404, { 'content-security-policy': CSP }).end()
      return
    }
    send(response, path.endsWith('.js') ? 'text/javascript' : 'text/html; charset=utf-8', page)
  })
  const port = await freePort()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  origin = `http://127.0.0.1:${port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

describe("Debian's Chromium driven by playwright-core", () => {
  let browser: Browser | undefined
  let page: Page | undefined

  beforeAll(async () => {
    browser = await launchBrowser()
  }, LAUNCH_HOOK_TIMEOUT_MS)
  afterEach(async () => {
    await page?.close()
    page = undefined
  })
  afterAll(async () => {
    await browser?.close()
  })

  async function openPage(): Promise<Page> {
    if (browser === undefined) throw new Error('the browser did not start')
    page = await browser.newPage()
    return page
  }

  it('reports an inline script that the page’s CSP blocks, as a violation and a console error', async () => {
    const tab = await openPage()
    const watch = await watchPage(tab)

    await tab.goto(`${origin}/violating`)
    await watch.settle()

    expect(await tab.textContent('#status')).toBe('inline script blocked')
    expect(watch.violations()).toEqual([
      expect.objectContaining({
        effectiveDirective: 'script-src-elem',
        blockedURI: 'inline',
        documentURI: `${origin}/violating`,
        disposition: 'enforce',
      }),
    ])
    expect(watch.errors()).toEqual([expect.stringContaining('Content Security Policy')])
  })

  it('reports nothing on a page that keeps to its CSP, and submits its form to the server', async () => {
    const tab = await openPage()
    const watch = await watchPage(tab)

    await tab.goto(`${origin}/clean`)
    await expect.poll(() => tab.textContent('#status')).toBe('script from the origin ran')
    await tab.fill('#unit', 'network/prod')
    await tab.fill('#note', 'a note with spaces & symbols')
    await Promise.all([tab.waitForURL(`${origin}/submit`), tab.click('button[type=submit]')])
    await watch.settle()

    expect(await tab.textContent('p')).toBe('saved')
    expect(submissions.map((form) => Object.fromEntries(form))).toEqual([
      { unit: 'network/prod', note: 'a note with spaces & symbols' },
    ])
    expect(watch.violations()).toEqual([])
    expect(watch.errors()).toEqual([])
  })
})
