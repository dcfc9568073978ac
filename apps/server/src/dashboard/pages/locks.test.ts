import { parseUnitId } from '@cairn/core'
import { ManualClock } from '@cairn/core/testing'
import { beforeEach, describe, expect, it } from 'vitest'
import { inProcessApp } from '../../testing/in-process'
import { ARRANGER, usePageFixture } from './page-fixture'

/**
 * `/app/locks` in process, with RBAC on and authentication off: every page is seen by
 * `anonymous`, which holds only what a test grants it.
 */

const pages = usePageFixture()
const { grant, page } = pages

beforeEach(async () => {
  for (const unit of ['team/app', 'team/db', 'team/free', 'other/app']) {
    await pages.app.core.units.create(ARRANGER, parseUnitId(unit))
  }
  for (const unit of ['team/app', 'team/db', 'other/app']) {
    await pages.app.core.locks.lock(
      ARRANGER,
      parseUnitId(unit),
      { Operation: 'OperationTypeApply', Who: `ci@${unit}` },
      { source: 'http' },
    )
  }
})

/** The units of the table, row by row. */
const unitsOf = (html: string) =>
  [...html.matchAll(/<td data-label="Unit"><a href="\/app\/unit\?id=([^"]+)">/g)].map((match) =>
    decodeURIComponent(match[1] as string),
  )

describe('the locks page', () => {
  it('lists the locks a reader may see, who holds them and for what, with no unlock link', async () => {
    await grant('reader', 'team/*')
    const html = await page('/app/locks')
    expect(unitsOf(html)).toEqual(['team/app', 'team/db'])
    expect(html).toContain('ci@team/app')
    expect(html).toContain('OperationTypeApply')
    expect(html).not.toContain('other/app')
    expect(html).not.toContain('/app/unit/unlock')
    expect(html).not.toContain('Force unlock')
  })

  it('offers to force open the locks of the units the person manages, and only those', async () => {
    await grant('reader', 'team/*')
    await grant('admin', 'team/db')
    const html = await page('/app/locks')
    expect(html).toContain('href="/app/unit/unlock?id=team%2Fdb"')
    expect(html).not.toContain('/app/unit/unlock?id=team%2Fapp')
  })

  it('marks a lock held past the stale age', async () => {
    const clock = new ManualClock()
    const stale = await inProcessApp({
      rbac: { enabled: true },
      lockStaleAfterMs: 60_000,
      coreClock: clock,
    })
    try {
      await stale.core.units.create(ARRANGER, parseUnitId('team/app'))
      await stale.core.locks.lock(ARRANGER, parseUnitId('team/app'), {}, { source: 'http' })
      await stale.rbac.assign(ARRANGER, {
        principal: 'user:anonymous',
        role: 'reader',
        scope: '*',
      })
      const read = async () => (await stale.request('/app/locks')).text()
      expect(await read()).toContain('<span class="badge locked">held</span>')
      clock.advance(61_000)
      expect(await read()).toContain('<span class="badge stale">stale</span>')
    } finally {
      await stale.close()
    }
  })

  it('filters by prefix and pages by cursor', async () => {
    await grant('reader', '*')
    expect(unitsOf(await page('/app/locks?prefix=other/'))).toEqual(['other/app'])
    const html = await page('/app/locks?cursor=team/app')
    expect(unitsOf(html)).toEqual(['team/db'])
    expect(html).toContain('href="/app/locks">First page</a>')
  })
})
