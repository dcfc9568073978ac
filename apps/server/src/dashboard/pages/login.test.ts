import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'

describe('the sign-in page', () => {
  let fixture: InProcessApp | undefined
  afterEach(() => fixture?.close())

  it('names the file that holds local mode’s admin token, not a placeholder', async () => {
    fixture = await inProcessApp({ auth: 'local' })
    const html = await (await fixture.request('/app/login')).text()
    const path = /token is in the file <code>([^<]+)<\/code> on the server/.exec(html)?.[1]
    expect(path).toMatch(/^\/.+\/cairn-in-process-[^/]+\/admin\.token$/)
    expect(html).not.toContain('data-dir')
  })
})
