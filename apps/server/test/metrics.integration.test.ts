import { randomUUID } from 'node:crypto'
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3'
import { terraformState } from '@cairn/core/testing'
import { startServer, useServer } from '@cairn/testkit'
import { describe, expect, it } from 'vitest'
import { issueS3Credentials, s3Client } from './support/s3'

// `GET /metrics` (DESIGN section 13, docs/configuration.md): traffic sent on each surface of a
// real server, then the counters it scrapes, read from prom-client's text format.

/** One sample of the Prometheus text format: its name, labels and value. */
interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** Parses the Prometheus text exposition format (comments skipped). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a Prometheus sample: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, '$1')
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) })
  }
  return samples
}

/** The sum of the samples named `name` whose labels include `labels`. */
function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((sample) => sample.name === name)
    .filter((sample) =>
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    )
    .reduce((sum, sample) => sum + sample.value, 0)
}

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const reply = await fetch(url, { headers })
  const text = await reply.text()
  expect(reply.status, text).toBe(200)
  expect(reply.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
  return parseMetrics(text)
}

const lockBody = () =>
  JSON.stringify({
    ID: randomUUID(),
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'ci@runner',
    Version: '1.11.4',
    Created: new Date().toISOString(),
    Path: '',
  })

describe('metrics on the loopback listener', () => {
  const server = useServer({ auth: true })

  it('counts what was sent on each surface', async () => {
    const metricsUrl = server.metricsUrl
    if (metricsUrl === undefined) throw new Error('the server logged no metrics URL')
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/)
    const auth = { Authorization: `Bearer ${server.token}` }
    const send = (method: string, path: string, body?: string) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: auth,
        ...(body === undefined ? {} : { body }),
      })

    // /v1: one unit, three uploads of known sizes.
    expect((await send('POST', '/v1/units', JSON.stringify({ id: 'metrics/v1' }))).status).toBe(201)
    const lineage = randomUUID()
    const uploads = [1, 2, 3].map((serial) =>
      terraformState({ serial, lineage, resources: serial }),
    )
    for (const state of uploads) {
      const reply = await send('POST', '/v1/units/metrics/v1/upload', state)
      expect(reply.status, await reply.text()).toBe(200)
    }
    const download = await send('GET', '/v1/units/metrics/v1/download')
    expect(await download.text()).toBe(uploads[2])

    // The http backend: a lock, then a second LOCK refused with 423.
    expect((await send('LOCK', '/v1/backend/metrics/http', lockBody())).status).toBe(200)
    expect((await send('LOCK', '/v1/backend/metrics/http', lockBody())).status).toBe(423)

    // TFE: the ping the cloud block sends first.
    expect((await send('GET', '/tfe/api/v2/ping')).status).toBe(200)

    // S3: a state put and read back with the AWS SDK.
    const s3 = s3Client(server.url, await issueS3Credentials(server.url, server.token))
    const s3State = terraformState({ serial: 1, lineage: randomUUID(), resources: 5 })
    await s3.send(
      new PutObjectCommand({
        Bucket: 'tfstate',
        Key: 'metrics/s3/terraform.tfstate',
        Body: s3State,
      }),
    )
    const got = await s3.send(
      new GetObjectCommand({ Bucket: 'tfstate', Key: 'metrics/s3/terraform.tfstate' }),
    )
    expect(await got.Body?.transformToString()).toBe(s3State)
    s3.destroy()

    // The main listener has no /metrics without a token.
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404)

    const samples = await scrape(metricsUrl)
    const requests = (labels: Record<string, string>) =>
      valueOf(samples, 'cairn_http_requests_total', labels)
    expect(requests({ surface: 'v1', route: '/v1/units', method: 'POST', status: '201' })).toBe(1)
    expect(
      requests({ surface: 'v1', route: '/v1/units/*/upload', method: 'POST', status: '200' }),
    ).toBe(3)
    expect(requests({ surface: 'v1', route: '/v1/units/*/download', status: '200' })).toBe(1)
    expect(requests({ surface: 'http_backend', method: 'LOCK', status: '200' })).toBe(1)
    expect(requests({ surface: 'http_backend', method: 'LOCK', status: '423' })).toBe(1)
    expect(requests({ surface: 'tfe', route: '/tfe/api/v2/ping', status: '200' })).toBe(1)
    expect(requests({ surface: 's3', method: 'PUT', status: '200' })).toBe(1)
    expect(requests({ surface: 's3', method: 'GET', status: '200' })).toBe(1)
    // The refused /metrics on the main listener; the scrapes of the loopback listener are not counted.
    expect(requests({ surface: 'health' })).toBe(1)
    expect(requests({ surface: 'health', route: 'unmatched', status: '404' })).toBe(1)
    // No series names a unit: routes are patterns.
    const routes = samples.flatMap((sample) => sample.labels['route'] ?? [])
    expect(routes.filter((route) => route.includes('metrics/'))).toEqual([])

    // Every request counted has its latency observed.
    expect(
      valueOf(samples, 'cairn_http_request_duration_seconds_count', {
        surface: 'v1',
        route: '/v1/units/*/upload',
      }),
    ).toBe(3)

    const bytes = (text: string) => Buffer.byteLength(text)
    const uploaded = uploads.reduce((sum, state) => sum + bytes(state), 0)
    expect(valueOf(samples, 'cairn_state_bytes_in_total', { surface: 'v1' })).toBe(uploaded)
    expect(valueOf(samples, 'cairn_state_bytes_out_total', { surface: 'v1' })).toBe(
      bytes(uploads[2] ?? ''),
    )
    expect(valueOf(samples, 'cairn_state_bytes_in_total', { surface: 's3' })).toBe(bytes(s3State))
    expect(valueOf(samples, 'cairn_state_bytes_out_total', { surface: 's3' })).toBe(bytes(s3State))
    expect(valueOf(samples, 'cairn_lock_conflicts_total', { surface: 'http_backend' })).toBe(1)
    expect(valueOf(samples, 'cairn_lock_conflicts_total')).toBe(1)

    expect(
      valueOf(samples, 'cairn_store_operations_total', { operation: 'put', outcome: 'ok' }),
    ).toBeGreaterThan(0)
    expect(valueOf(samples, 'cairn_store_operations_total', { outcome: 'error' })).toBe(0)
    expect(valueOf(samples, 'cairn_record_write_retries_total')).toBe(0)
    // The process's own metrics.
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(
        samples.some((sample) => sample.name === name),
        name,
      ).toBe(true)
    }
  })

  it('answers only GET /metrics on the loopback listener', async () => {
    const base = (server.metricsUrl ?? '').replace(/\/metrics$/, '')
    expect((await fetch(`${base}/`)).status).toBe(404)
    expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405)
  })
})

describe('metrics behind SVC_METRICS_TOKEN', () => {
  const token = 'a'.repeat(16) + randomUUID()
  const server = useServer({ auth: true, env: { SVC_METRICS_TOKEN: token } })

  it('serves /metrics on the main listener to the token alone, and opens no loopback listener', async () => {
    expect(server.metricsUrl).toBeUndefined()
    expect(server.output()).toContain('"msg":"metrics","served":"main listener"')
    const url = `${server.url}/metrics`
    expect((await fetch(url)).status).toBe(401)
    const wrong = await fetch(url, { headers: { Authorization: `Bearer ${token}x` } })
    expect(wrong.status).toBe(401)
    // The API's own tokens do not open it either.
    expect(
      (await fetch(url, { headers: { Authorization: `Bearer ${server.token}` } })).status,
    ).toBe(401)
    const samples = await scrape(url, { Authorization: `Bearer ${token}` })
    expect(
      valueOf(samples, 'cairn_http_requests_total', {
        surface: 'health',
        route: '/metrics',
        status: '401',
      }),
    ).toBe(3)
  })
})

describe('metrics on another address (-metrics-host)', () => {
  // In a container the loopback address is the container's own: a scraper outside it needs the
  // listener on an address it can reach.
  const server = useServer({ args: ['-metrics-host', '0.0.0.0'] })

  it('serves the listener on that address, and says where', async () => {
    const url = new URL(server.metricsUrl ?? '')
    expect(url.hostname).toBe('0.0.0.0')
    expect(server.output()).toContain('"msg":"metrics","served":"metrics listener"')
    await scrape(`http://127.0.0.1:${url.port}/metrics`)
  })
})

describe('a metrics token too short', () => {
  it('stops the server at start with one line naming the variable', async () => {
    await expect(
      startServer({ env: { SVC_METRICS_TOKEN: 'short' }, startTimeoutMs: 10_000 }),
    ).rejects.toThrow(/exited with code 2[\s\S]*SVC_METRICS_TOKEN must be at least 32 characters/)
  })
})
