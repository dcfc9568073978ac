import { createHash, randomUUID } from 'node:crypto'
import { request } from 'node:http'
import { terraformState } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { useServer } from '@cairn/testkit'

interface Answer {
  status: number
  body: string
  retryAfter?: string
}

/** One request on its own connection, so concurrent requests really race at the server. */
function send(url: string, method: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        const retryAfter = res.headers['retry-after']
        resolve({ status: res.statusCode ?? 0, body: text, ...(retryAfter && { retryAfter }) })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * Sends an upload as a Terraform client does: one caller has a share of the uploads in flight, and
 * one more is refused at once with 503 `server_busy` and `Retry-After`, which every client retries.
 */
async function upload(url: string, body: string): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send(url, 'POST', body)
    if (answer.status !== 503 || attempt === 50) return answer
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'server_busy' })
    expect(Number(answer.retryAfter)).toBeGreaterThan(0)
    await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200))
  }
}

describe('concurrency over a real socket', () => {
  const server = useServer()

  const create = async (id: string) => {
    expect((await send(`${server.url}/v1/units`, 'POST', JSON.stringify({ id }))).status).toBe(201)
  }

  it('gives the lock to exactly one of 50 concurrent /v1 lock requests', async () => {
    await create('race/api')
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => send(`${server.url}/v1/units/race/api/lock`, 'POST', '{}')),
    )
    const won = answers.filter((answer) => answer.status === 200)
    expect(won).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 409)).toHaveLength(49)
    const winner = (JSON.parse((won[0] as Answer).body) as { ID: string }).ID
    for (const answer of answers.filter((one) => one.status === 409)) {
      expect(JSON.parse(answer.body)).toMatchObject({
        error: 'lock_conflict',
        lock: { ID: winner },
      })
    }
  })

  it('gives the lock to exactly one of 50 concurrent http-backend LOCKs, the rest 423 naming it', async () => {
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        send(
          `${server.url}/v1/backend/race/http`,
          'LOCK',
          JSON.stringify({ ID: randomUUID(), Who: 'racer' }),
        ),
      ),
    )
    const won = answers.filter((answer) => answer.status === 200)
    expect(won).toHaveLength(1)
    const winner = (JSON.parse((won[0] as Answer).body) as { ID: string }).ID
    const lost = answers.filter((answer) => answer.status === 423)
    expect(lost).toHaveLength(49)
    for (const answer of lost) expect((JSON.parse(answer.body) as { ID: string }).ID).toBe(winner)
  })

  it('loses no version when many clients upload at once', async () => {
    await create('race/writes')
    const bodies = Array.from({ length: 40 }, (_, index) =>
      JSON.stringify({ writer: index, pad: 'x'.repeat(5000) }),
    )
    const answers = await Promise.all(
      bodies.map((body) => upload(`${server.url}/v1/units/race/writes/upload`, body)),
    )
    expect(answers.map((answer) => answer.status)).toEqual(bodies.map(() => 200))
    const listed = JSON.parse(
      (await send(`${server.url}/v1/units/race/writes/versions?limit=1000`, 'GET')).body,
    ) as {
      versions: { sha256: string }[]
    }
    const expected = bodies.map((body) => createHash('sha256').update(body).digest('hex'))
    expect(new Set(listed.versions.map((version) => version.sha256))).toEqual(new Set(expected))
  })

  it('keeps every acknowledged write when Terraform states of one lineage race on their serials', async () => {
    await create('race/serials')
    const states = Array.from({ length: 30 }, (_, index) =>
      terraformState({ serial: index + 1, outputs: { n: String(index) } }),
    )
    const answers = await Promise.all(
      states.map((state) => upload(`${server.url}/v1/units/race/serials/upload`, state)),
    )
    for (const answer of answers) expect([200, 409]).toContain(answer.status)
    const accepted = states.filter((_, index) => answers[index]?.status === 200)
    expect(accepted.length).toBeGreaterThan(0)
    const listed = JSON.parse(
      (await send(`${server.url}/v1/units/race/serials/versions?limit=1000`, 'GET')).body,
    ) as {
      versions: { sha256: string; serial: number }[]
    }
    const digests = listed.versions.map((version) => version.sha256)
    for (const state of accepted)
      expect(digests).toContain(createHash('sha256').update(state).digest('hex'))
    // Accepted serials only ever go up: the versions, newest first, have falling serials.
    const serials = listed.versions.map((version) => version.serial)
    expect(serials).toEqual([...serials].sort((a, b) => b - a))
    const current = JSON.parse((await send(`${server.url}/v1/units/race/serials`, 'GET')).body) as {
      serial: number
    }
    expect(current.serial).toBe(Math.max(...serials))
  })
})
