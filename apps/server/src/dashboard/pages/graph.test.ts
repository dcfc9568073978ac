import { beforeEach, describe, expect, it } from 'vitest'
import { usePageFixture } from './page-fixture'
import { CONTENT_SECURITY_POLICY } from '../content-security-policy'

/**
 * `/app/unit/graph` in process, with RBAC on and authentication off: every page is seen by
 * `anonymous`, which holds only what a test grants it.
 */

const pages = usePageFixture()
const { apply, depend, grant } = pages

async function graphOf(id: string, status = 200): Promise<string> {
  const response = await pages.app.request(
    `/app/unit/graph?${new URLSearchParams({ id }).toString()}`,
  )
  const text = await response.text()
  expect(response.status, text).toBe(status)
  if (status === 200)
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
  return text
}

/** The SVG of a page, and each of its nodes as `class: label`. */
function svgOf(html: string): { svg: string; nodes: string[] } {
  const svg = /<svg class="graph"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? ''
  const nodes = [...svg.matchAll(/<g class="node ([a-z ]+)"><title>([^<]*)<\/title>/g)].map(
    (match) => `${match[1]}: ${match[2]}`,
  )
  return { svg, nodes }
}

/** An edge of the SVG as `class from -> to`, with whether it ends in an arrow. */
function edgesOf(svg: string): string[] {
  return [
    ...svg.matchAll(
      /<path class="(edge [a-z]+)" d="[^"]+" marker-end="url\(#graph-arrow(?:-pending)?\)" data-from="([^"]+)" data-to="([^"]+)">/g,
    ),
  ].map((match) => `${match[1]} ${match[2]} -> ${match[3]}`)
}

describe('the graph page', () => {
  // team/net -> team/app -> team/web -> team/cdn, and team/db -> team/app
  beforeEach(async () => {
    await apply('team/net', { vpc: 'vpc-1' })
    for (const unit of ['team/db', 'team/app', 'team/web', 'team/cdn', 'team/far']) {
      await apply(unit)
    }
    await depend('team/app', { from: 'team/net', output: 'vpc' }, { from: 'team/db' })
    await depend('team/web', { from: 'team/app' })
    await depend('team/cdn', { from: 'team/web' })
    await depend('team/far', { from: 'team/cdn' })
  })

  it('draws the unit, two levels each way, coloured by status, an arrow for each edge', async () => {
    await grant('reader', '*')
    await apply('team/net', { vpc: 'vpc-2' })
    const html = await graphOf('team/app')
    const { svg, nodes } = svgOf(html)
    expect(svg).toMatch(/^<svg class="graph" role="img" aria-labelledby="graph-title graph-desc"/)
    expect(svg).toContain('<title id="graph-title">Dependencies of team/app</title>')
    expect(nodes.sort()).toEqual([
      'green: team/db',
      'green: team/net',
      'red focus: team/app',
      'yellow: team/cdn',
      'yellow: team/web',
    ])
    // Two levels down: team/far, three edges away, is left out.
    expect(svg).not.toContain('team/far')
    expect(edgesOf(svg).sort()).toEqual([
      'edge ok team/app -> team/web',
      'edge ok team/db -> team/app',
      'edge ok team/web -> team/cdn',
      'edge pending team/net -> team/app',
    ])
    expect(svg).toContain('<marker id="graph-arrow"')
    // Each node leads to its unit's page; no style attribute (the CSP refuses them).
    expect(svg).toContain('<a href="/app/unit?id=team%2Fweb">')
    expect(html).not.toMatch(/\sstyle=/)
    // The same, as lists.
    expect(html).toMatch(
      /<a href="\/app\/unit\?id=team%2Fcdn">team\/cdn<\/a><\/td><td data-label="Where">downstream, 2 edges away/,
    )
  })

  it('shows the neighbours a reader may not read as hidden nodes, never their IDs', async () => {
    await apply('other/secret-net', { vpc: 'vpc-1' })
    await apply('other/secret-app')
    await depend('team/app', { from: 'other/secret-net', output: 'vpc' }, { from: 'team/db' })
    await depend('other/secret-app', { from: 'team/app' })
    await grant('reader', 'team/*')
    const html = await graphOf('team/app')
    expect(html).not.toContain('secret')
    const { svg, nodes } = svgOf(html)
    expect(nodes.sort()).toEqual([
      'green focus: team/app',
      'green: team/cdn',
      'green: team/db',
      'green: team/web',
      'hidden: A unit you may not read',
      'hidden: A unit you may not read',
    ])
    expect(edgesOf(svg).sort()).toEqual([
      'edge ok #1 -> team/app',
      'edge ok team/app -> team/web',
      'edge ok team/db -> team/app',
      'edge ok team/web -> team/cdn',
      'edge unknown team/app -> #2',
    ])
    expect(html).toContain('a unit you may not read')
  })

  it('refuses a unit the reader may not read, and one that does not exist', async () => {
    await grant('reader', 'team/*')
    await apply('other/app')
    expect(await graphOf('other/app', 403)).toContain(
      'anonymous does not have unit:read on other/app',
    )
    expect(await graphOf('team/none', 404)).toContain('Not found')
  })

  it('says so when a unit has no edges', async () => {
    await grant('reader', '*')
    await apply('lone')
    const html = await graphOf('lone')
    expect(html).toContain('This unit has no dependencies, and no unit depends on it.')
    expect(html).not.toContain('<svg')
  })

  it("lists on a unit's page what depends on it, naming only the units the person may read", async () => {
    await apply('team/ops')
    await depend('team/ops', { from: 'team/app' })
    await grant('reader', 'team/app')
    await grant('reader', 'team/web')
    const response = await pages.app.request('/app/unit?id=team%2Fapp')
    const html = await response.text()
    expect(response.status, html).toBe(200)
    const named = [
      ...html.matchAll(/<td data-label="Downstream"><a href="[^"]+">([^<]+)<\/a>/g),
    ].map((match) => match[1])
    expect(named).toEqual(['team/web'])
    expect(html).toContain('And 1 unit you may not read depends on it.')
    expect(html).not.toContain('team/ops')
  })
})
