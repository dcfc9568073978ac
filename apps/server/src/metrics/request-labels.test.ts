import { randomUUID } from 'node:crypto'
import { terraformState } from '@cairn/core/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'
import { surfaceOf } from './request-labels'
import { createServerMetrics, type ServerMetrics } from './server-metrics'

describe('surfaceOf', () => {
  it.each([
    ['/v1/units/team/app', 'v1'],
    ['/v1/auth/me', 'v1'],
    ['/v1/backend/team/app', 'http_backend'],
    ['/tfe/api/v2/ping', 'tfe'],
    ['/.well-known/terraform.json', 'tfe'],
    ['/s3/states/app/terraform.tfstate', 's3'],
    ['/s3', 's3'],
    ['/oauth/token', 'oauth'],
    ['/app', 'web'],
    ['/app/settings/tokens', 'web'],
    ['/app/unit/unlock', 'web'],
    ['/application', 'other'],
    ['/healthz', 'health'],
    ['/metrics', 'health'],
    ['/favicon.ico', 'other'],
    ['/v10', 'other'],
    ['/s3x', 'other'],
  ])('puts %s under %s', (path, surface) => {
    expect(surfaceOf(path)).toBe(surface)
  })
})

/** The `cairn_http_requests_total` series, as `surface route method status` lines. */
async function requestSeries(metrics: ServerMetrics): Promise<Map<string, number>> {
  const { values } = await metrics.requests.get()
  return new Map(
    values.map(({ labels, value }) => [
      [labels.surface, labels.route, labels.method, labels.status].join(' '),
      value,
    ]),
  )
}

describe('request metrics in process', () => {
  let fixture: InProcessApp | undefined
  afterEach(async () => {
    await fixture?.close()
    fixture = undefined
  })

  it('labels each request by its surface and route pattern, never by the unit it names', async () => {
    const metrics = createServerMetrics()
    fixture = await inProcessApp({ metrics })
    const state = terraformState({ serial: 1, lineage: randomUUID() })
    for (const unit of ['team/a', 'team/b', 'team/c']) {
      const created = await fixture.request('/v1/units', {
        method: 'POST',
        body: JSON.stringify({ id: unit }),
      })
      expect(created.status).toBe(201)
      const upload = await fixture.request(`/v1/units/${unit}/upload`, {
        method: 'POST',
        body: state,
      })
      expect(upload.status).toBe(200)
      // Bytes out are counted as the body is sent, so each download is read to its end.
      expect(await (await fixture.request(`/v1/units/${unit}/download`)).text()).toBe(state)
      expect(await (await fixture.request(`/v1/backend/${unit}`)).text()).toBe(state)
    }
    expect((await fixture.request('/v1/units/team/none')).status).toBe(404)
    expect((await fixture.request('/healthz')).status).toBe(200)
    expect((await fixture.request('/nowhere')).status).toBe(404)
    expect((await fixture.request('/metrics')).status).toBe(404)

    expect(await requestSeries(metrics)).toEqual(
      new Map([
        ['v1 /v1/units POST 201', 3],
        ['v1 /v1/units/*/upload POST 200', 3],
        ['v1 /v1/units/*/download GET 200', 3],
        ['http_backend /v1/backend/* GET 200', 3],
        ['v1 /v1/units/* GET 404', 1],
        ['health /healthz GET 200', 1],
        ['other unmatched GET 404', 1],
        ['health unmatched GET 404', 1],
      ]),
    )
    const bytes = Buffer.byteLength(state)
    expect((await metrics.stateBytesIn.get()).values).toEqual([
      { labels: { surface: 'v1' }, value: 3 * bytes },
    ])
    expect((await metrics.stateBytesOut.get()).values).toEqual([
      { labels: { surface: 'v1' }, value: 3 * bytes },
      { labels: { surface: 'http_backend' }, value: 3 * bytes },
    ])
  })

  it('counts a lock conflict under the surface that refused it', async () => {
    const metrics = createServerMetrics()
    fixture = await inProcessApp({ metrics })
    const lock = (id: string) =>
      JSON.stringify({ ID: id, Operation: 'OperationTypeApply', Who: 'me', Version: '1.11.4' })
    const first = await fixture.request('/v1/backend/team/app', {
      method: 'LOCK',
      body: lock(randomUUID()),
    })
    expect(first.status).toBe(200)
    const second = await fixture.request('/v1/backend/team/app', {
      method: 'LOCK',
      body: lock(randomUUID()),
    })
    expect(second.status).toBe(423)
    const third = await fixture.request('/v1/units/team/app/lock', {
      method: 'POST',
      body: lock(randomUUID()),
    })
    expect(third.status).toBe(409)
    expect((await metrics.lockConflicts.get()).values).toEqual([
      { labels: { surface: 'http_backend' }, value: 1 },
      { labels: { surface: 'v1' }, value: 1 },
    ])
  })
})
