import { terraformState } from '@cairn/core/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { usePageFixture } from './page-fixture'

/**
 * `/app/search` in process, with RBAC on and authentication off: every page is seen by
 * `anonymous`, which holds only what a test grants it.
 */

const pages = usePageFixture()
const { grant, page, write } = pages

beforeEach(async () => {
  // terraformState's resources are terraform_data.r0, r1... with the IDs id-0, id-1...
  await write('team/app', terraformState({ serial: 1, resources: 2 }))
  await write('other/app', terraformState({ serial: 1, resources: 1 }))
})

/** Each hit as `unit address`. */
const hitsOf = (html: string) =>
  [
    ...html.matchAll(
      /<td data-label="Unit"><a href="\/app\/unit\?id=([^"]+)">[^<]*<\/a><\/td><td data-label="Address" class="mono">([^<]+)</g,
    ),
  ].map((match) => `${decodeURIComponent(match[1] as string)} ${match[2]}`)

describe('the search page', () => {
  it('shows the form alone until something is asked', async () => {
    await grant('reader', '*')
    const html = await page('/app/search')
    expect(html).toContain('<form class="filters" method="get" action="/app/search"')
    expect(hitsOf(html)).toEqual([])
    expect(html).not.toContain('Nothing found')
  })

  it('finds a resource by its ID in the units the person may read', async () => {
    await grant('reader', 'team/*')
    const html = await page('/app/search?q=id-1')
    expect(hitsOf(html)).toEqual(['team/app terraform_data.r1'])
    expect(html).toMatch(/<td data-label="Matched">id<span class="mono"> id-1<\/span>/)
    expect(hitsOf(await page('/app/search?q=id-0'))).toEqual(['team/app terraform_data.r0'])
  })

  it('finds resources by type, and says when nothing is found', async () => {
    await grant('reader', '*')
    expect(hitsOf(await page('/app/search?type=terraform_data'))).toEqual([
      'other/app terraform_data.r0',
      'team/app terraform_data.r0',
      'team/app terraform_data.r1',
    ])
    expect(await page('/app/search?q=nothing-here')).toContain('Nothing found.')
  })

  it('says plainly which units are not indexed, so not searched', async () => {
    await write('team/odd', '{"not": "a Terraform state"}\n')
    await grant('reader', '*')
    const html = await page('/app/search?q=id-0')
    expect(html).toContain('1 unit is not indexed, so it was not searched')
    expect(html).toMatch(
      /<a href="\/app\/unit\?id=team%2Fodd">team\/odd<\/a>: the body is not a Terraform state/,
    )
    expect(hitsOf(html)).toEqual(['other/app terraform_data.r0', 'team/app terraform_data.r0'])
  })
})
