import { createHash, randomUUID } from 'node:crypto'
import { request } from 'node:http'
import { terraformState } from '@cairn/core/testing'
import { describe, expect, it } from 'vitest'
import { useServer } from '@cairn/testkit'

interface Answer {
  status: number
  body: string
}

/** One request on its own connection, so concurrent requests really race at the server. */
function send(url: string, method: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: text })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
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
      bodies.map((body) => send(`${server.url}/v1/units/race/writes/upload`, 'POST', body)),
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
      states.map((state) => send(`${server.url}/v1/units/race/serials/upload`, 'POST', state)),
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
