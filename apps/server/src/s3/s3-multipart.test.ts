import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessApp, type InProcessApp } from '../testing/in-process'

const KEY = '/s3/b/app/terraform.tfstate'

/** A body of `size` bytes that declares no length, sent in chunks as a stream arrives. */
function stream(size: number): ReadableStream<Uint8Array> {
  let left = size
  return new ReadableStream({
    pull(controller) {
      const chunk = Math.min(left, 256)
      controller.enqueue(new Uint8Array(chunk).fill(0x20))
      left -= chunk
      if (left === 0) controller.close()
    },
  })
}

const tag = (xml: string, name: string) =>
  [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((match) => match[1])

describe('S3 multipart parts, in process with authentication off', () => {
  let app: InProcessApp
  let uploadId: string
  beforeAll(async () => {
    app = await inProcessApp({ maxStateBytes: 1024 })
    const created = await app.request(`${KEY}?uploads`, { method: 'POST' })
    expect(created.status).toBe(200)
    uploadId = tag(await created.text(), 'UploadId')[0] ?? ''
  })
  afterAll(async () => {
    await app.close()
  })

  const putPart = (partNumber: number, body: ReadableStream<Uint8Array>) =>
    app.request(`${KEY}?partNumber=${partNumber}&uploadId=${uploadId}`, {
      method: 'PUT',
      body,
      duplex: 'half',
    })

  it('refuses a part streamed past the state limit, with no length declared, keeping none of it', async () => {
    expect((await putPart(1, stream(600))).status).toBe(200)
    const refused = await putPart(2, stream(600))
    expect(refused.status).toBe(400)
    expect(tag(await refused.text(), 'Code')).toEqual(['EntityTooLarge'])
    const listed = await (await app.request(`${KEY}?uploadId=${uploadId}`)).text()
    expect(tag(listed, 'PartNumber')).toEqual(['1'])
    expect(tag(listed, 'Size')).toEqual(['600'])
    // What is left of the limit still goes in.
    expect((await putPart(2, stream(424))).status).toBe(200)
  })
})
