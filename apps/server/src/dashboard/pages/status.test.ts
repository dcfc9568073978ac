import { beforeEach, describe, expect, it } from 'vitest'
import { usePageFixture } from './page-fixture'

/**
 * `/app/status` in process, with RBAC on and authentication off: every page is seen by
 * `anonymous`, which holds only what a test grants it.
 */

const pages = usePageFixture()
const { apply, depend, grant, page } = pages

/** The units of the "to apply" table, row by row: each row's first link. */
function planOf(html: string): string[] {
  const table = /<table class="stack"><caption class="skip">Units to apply[\s\S]*?<\/table>/.exec(
    html,
  )
  if (table === null) return []
  return [...table[0].matchAll(/<tr>[\s\S]*?href="\/app\/unit\?id=([^"]+)"/g)].map((match) =>
    decodeURIComponent(match[1] as string),
  )
}

describe('the status page', () => {
  // team/d-net -> team/c-app -> team/b-web -> team/a-cdn: upstream first is the reverse of ID
  // order, so a page sorted by ID would show the wrong order.
  beforeEach(async () => {
    await apply('team/d-net', { vpc: 'vpc-1' })
    for (const unit of ['team/c-app', 'team/b-web', 'team/a-cdn', 'team/z-other']) {
      await apply(unit)
    }
    await depend('team/c-app', { from: 'team/d-net', output: 'vpc' })
    await depend('team/b-web', { from: 'team/c-app' })
    await depend('team/a-cdn', { from: 'team/b-web' })
  })

  it('lists the units to apply upstream first, with why, and counts each colour', async () => {
    await grant('reader', '*')
    await apply('team/d-net', { vpc: 'vpc-2' })
    const html = await page('/app/status?prefix=team/')
    expect(planOf(html)).toEqual(['team/c-app', 'team/b-web', 'team/a-cdn'])
    expect(html).toMatch(/<span class="status red">red<\/span> <strong>1<\/strong> unit\b/)
    expect(html).toMatch(/<span class="status yellow">yellow<\/span> <strong>2<\/strong> units/)
    expect(html).toMatch(/<span class="status green">green<\/span> <strong>2<\/strong> units/)
    // Why c-app is red: the output it reads changed, in the upstream's third version.
    expect(html).toContain('output <code>vpc</code> changed')
    expect(html).toContain('(serial 6)')
    // Why b-web waits: c-app upstream is red.
    expect(html).toMatch(/waits for <a href="\/app\/unit\?id=team%2Fc-app">team\/c-app<\/a>/)
    expect(html).toMatch(/<details><summary>2 units are up to date<\/summary>/)
    expect(html).toContain('team/z-other')
  })

  it('says when there is nothing to apply', async () => {
    await grant('reader', '*')
    const html = await page('/app/status')
    expect(planOf(html)).toEqual([])
    expect(html).toContain('Nothing to apply: every unit here is green.')
  })

  it('shows only the units the person may read, an order still holding', async () => {
    await grant('reader', 'team/c-app')
    await grant('reader', 'team/a-cdn')
    await apply('team/d-net', { vpc: 'vpc-2' })
    const html = await page('/app/status')
    expect(planOf(html)).toEqual(['team/c-app', 'team/a-cdn'])
    expect(html).not.toContain('team/d-net"')
    expect(html).not.toContain('>team/b-web<')
  })

  it('counts the red units upstream that the person may not read, without naming them', async () => {
    await grant('reader', 'team/b-web')
    await grant('reader', 'team/a-cdn')
    await apply('team/d-net', { vpc: 'vpc-2' })
    const html = await page('/app/status')
    expect(planOf(html)).toEqual(['team/b-web', 'team/a-cdn'])
    // Both wait for c-app, which is red and hidden: b-web through its edge, a-cdn through b-web.
    expect(html).toContain('waits for 1 unit you may not read upstream')
    expect(html).not.toContain('team/c-app')
    expect(html).not.toContain('team/d-net')
  })
})
