import { Buffer } from 'node:buffer'
import { describe, expect, it } from 'vitest'
import { StateScanner } from '@cairn/state-scan'
import { buildIndexBytes } from './index-builder'
import { IndexStream, NoIndex } from './index-stream'

/** A state of `count` resources of ten instances, pretty-printed as Terraform writes it. */
function stateOf(count: number): Buffer {
  const resources = Array.from({ length: count }, (_, n) => ({
    mode: 'managed',
    type: 'aws_instance',
    name: `web${n}`,
    provider: 'provider["registry.terraform.io/hashicorp/aws"]',
    instances: Array.from({ length: 10 }, (_, k) => ({
      index_key: k,
      attributes: { id: `i-${n}-${k}`, tags: { Name: `web-${k}` } },
    })),
  }))
  const state = {
    version: 4,
    terraform_version: '1.11.4',
    serial: 1,
    lineage: 'l',
    outputs: { ip: { value: '10.0.0.1', type: 'string' } },
    resources,
  }
  return Buffer.from(JSON.stringify(state, null, 2))
}

/** Scans `body` in 64 KiB chunks, streaming its entries into `stream` as a store would read it. */
async function streamed(
  body: Buffer,
  stream: IndexStream,
): Promise<{ bytes: Buffer; beforeEnd: number }> {
  const scanner = new StateScanner({ index: true, onEntries: stream.push })
  const stored: Uint8Array[] = []
  const reading = (async () => {
    for await (const chunk of stream.body()) stored.push(chunk)
  })()
  for (let at = 0; at < body.length; at += 65_536) {
    scanner.write(body.subarray(at, at + 65_536))
    // The store reads while the body arrives.
    await new Promise((resolve) => setImmediate(resolve))
  }
  const beforeEnd = stored.length
  stream.end(scanner.end())
  await reading
  return { bytes: Buffer.concat(stored), beforeEnd }
}

describe('an index stored as its state streams in', () => {
  it('is the index the whole scan gives, its entries written before the body ends', async () => {
    const body = stateOf(2_000)
    const stream = new IndexStream()
    const { bytes, beforeEnd } = await streamed(body, stream)
    // The opening and blocks of entries reached the store while the body was still arriving.
    expect(beforeEnd).toBeGreaterThan(2)
    const whole = new StateScanner({ index: true })
    whole.write(body)
    const built = buildIndexBytes(whole.end())
    if (built === undefined || 'none' in built) throw new Error('no index')
    expect(JSON.parse(bytes.toString('utf8'))).toEqual(JSON.parse(built.bytes.toString('utf8')))
    expect(stream.count).toBe(20_000)
  })

  it('fails with NoIndex, and the reason, when the body is no Terraform state', async () => {
    const stream = new IndexStream()
    const body = Buffer.from(JSON.stringify({ resources: [] }))
    await expect(streamed(body, stream)).rejects.toEqual(
      new NoIndex({
        none: 'the body is not a Terraform state (it has no version, serial and lineage)',
      }),
    )
  })

  it('fails, dropping what it holds and what comes after, when the write fails', async () => {
    const stream = new IndexStream()
    const read: Uint8Array[] = []
    const reading = (async () => {
      for await (const chunk of stream.body()) read.push(chunk)
    })()
    stream.push(Buffer.from('{"a":1}'))
    await new Promise((resolve) => setImmediate(resolve))
    const failure = new Error('the client went away')
    stream.fail(failure)
    stream.push(Buffer.from('{"b":2}'))
    await expect(reading).rejects.toBe(failure)
    expect(Buffer.concat(read).toString('utf8')).toBe('{"resources":[{"a":1}')
  })
})
