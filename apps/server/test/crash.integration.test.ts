import { createHash } from 'node:crypto'
import { request } from 'node:http'
import { terraformState } from '@cairn/core/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer, type RunningServer } from '@cairn/testkit'

const WRITERS = 4
const UNITS = ['crash/a', 'crash/b']

interface Attempt {
  unit: string
  sha256: string
  /** The request's ID, which its audit record names. */
  requestId: string
  acknowledged: boolean
}

/** Uploads a body; resolves true on 200, false on any other answer or a dropped connection. */
function upload(url: string, body: string, requestId: string): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { method: 'POST', agent: false, headers: { 'X-Request-ID': requestId } }
    const req = request(url, options, (res) => {
      res.resume()
      res.on('end', () => {
        resolve(res.statusCode === 200)
      })
      res.on('error', () => {
        resolve(false)
      })
    })
    req.on('error', () => {
      resolve(false)
    })
    // Send in pieces so that a kill can land while a body is on the wire.
    const bytes = Buffer.from(body)
    const piece = Math.ceil(bytes.length / 4)
    let at = 0
    const next = (): void => {
      if (at >= bytes.length) {
        req.end()
        return
      }
      req.write(bytes.subarray(at, at + piece))
      at += piece
      setImmediate(next)
    }
    next()
  })
}

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url)
  expect(response.status, url).toBe(200)
  return (await response.json()) as T
}

describe('a crash in the middle of a stream of uploads', () => {
  const servers: RunningServer[] = []
  afterAll(async () => {
    for (const server of servers.reverse()) await server.dispose()
  })

  it('leaves every acknowledged version listed and every unit at a whole version after SIGKILL', async () => {
    const first = await startServer()
    servers.push(first)
    for (const id of UNITS) {
      const created = await fetch(`${first.url}/v1/units`, {
        method: 'POST',
        body: JSON.stringify({ id }),
      })
      expect(created.status).toBe(201)
    }

    const attempts: Attempt[] = []
    let running = true
    // A function, so the writers read the flag afresh after each await.
    const isRunning = (): boolean => running
    const writer = async (index: number): Promise<void> => {
      const unit = UNITS[index % UNITS.length] as string
      for (let round = 0; isRunning(); round += 1) {
        // Serials grow per unit across writers; the lineage is per writer so none refuses another.
        const state = terraformState({
          serial: round + 1,
          lineage: `writer-${index}`,
          outputs: { round: String(round) },
          resources: 200,
        })
        const attempt = {
          unit,
          sha256: createHash('sha256').update(state).digest('hex'),
          requestId: `crash-${index}-${round}`,
          acknowledged: false,
        }
        attempts.push(attempt)
        const url = `${first.url}/v1/units/${unit}/upload`
        attempt.acknowledged = await upload(url, state, attempt.requestId)
        if (!attempt.acknowledged && isRunning())
          throw new Error(`an upload to ${unit} failed before the crash`)
      }
    }
    const writers = Array.from({ length: WRITERS }, (_, index) => writer(index))

    // Kill once plenty of writes are acknowledged, while every writer still has one in flight.
    const deadline = Date.now() + 30_000
    while (attempts.filter((attempt) => attempt.acknowledged).length < 40) {
      if (Date.now() > deadline)
        throw new Error('the writers did not get 40 writes acknowledged in 30 s')
      await new Promise((done) => setTimeout(done, 10))
    }
    running = false
    await first.stop('SIGKILL')
    await Promise.all(writers)
    const inFlight = attempts.filter((attempt) => !attempt.acknowledged).length
    expect(inFlight).toBeGreaterThan(0)

    const second = await startServer({ dataDir: first.dataDir })
    servers.push(second)
    for (const unit of UNITS) {
      const mine = attempts.filter((attempt) => attempt.unit === unit)
      const acknowledged = mine
        .filter((attempt) => attempt.acknowledged)
        .map((attempt) => attempt.sha256)
      const versions = await getJson<{ versions: { sha256: string }[] }>(
        `${second.url}/v1/units/${unit}/versions?limit=1000`,
      )
      const listed = versions.versions.map((version) => version.sha256)
      for (const sha256 of acknowledged) expect(listed).toContain(sha256)
      // Nothing that was never sent shows up, and in-flight writes are there whole or not at all.
      const sent = new Set(mine.map((attempt) => attempt.sha256))
      for (const sha256 of listed) expect(sent.has(sha256)).toBe(true)

      const meta = await getJson<{ sha256: string; version_count: number }>(
        `${second.url}/v1/units/${unit}`,
      )
      expect(meta.version_count).toBe(listed.length)
      const body = await (await fetch(`${second.url}/v1/units/${unit}/download`)).text()
      expect(createHash('sha256').update(body).digest('hex')).toBe(meta.sha256)
      expect(listed[0]).toBe(meta.sha256)
    }

    // Every acknowledged write has its audit record: each is durable before its answer, though
    // the writes at once share the durable writes of the trail.
    const audited = new Set<string>()
    let cursor: string | null = ''
    while (cursor !== null) {
      const page: { records: { request_id?: string }[]; next_cursor: string | null } =
        await getJson(
          `${second.url}/v1/audit?action=state.write&limit=1000${cursor === '' ? '' : `&cursor=${cursor}`}`,
        )
      for (const record of page.records)
        if (record.request_id !== undefined) audited.add(record.request_id)
      cursor = page.next_cursor
    }
    const missing = attempts
      .filter((attempt) => attempt.acknowledged && !audited.has(attempt.requestId))
      .map((attempt) => attempt.requestId)
    expect(missing).toEqual([])
  })
})
