import { describe, expect, it } from 'vitest'
import { decodeAwsChunked, type AwsChunkedOptions } from './aws-chunked'

async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += size) {
    await Promise.resolve()
    yield bytes.subarray(i, i + size)
  }
}

async function decode(text: string, size: number, options: Partial<AwsChunkedOptions> = {}) {
  let trailers: ReadonlyMap<string, string> | undefined
  const out: Buffer[] = []
  for await (const chunk of decodeAwsChunked(pieces(text, size), {
    signer: undefined,
    announcedTrailers: new Set(['x-amz-checksum-crc32']),
    onTrailers: (received) => {
      trailers = received
    },
    ...options,
  })) {
    out.push(Buffer.from(chunk))
  }
  return { body: Buffer.concat(out).toString(), trailers }
}

const ENCODED =
  '5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\nx-amz-checksum-crc32: AAAAAA== \r\n\r\n'

describe('decodeAwsChunked', () => {
  it.each([1, 2, 3, 7, 1000])('decodes chunks split in pieces of %i bytes', async (size) => {
    const { body, trailers } = await decode(ENCODED, size)
    expect(body).toBe('hello world!')
    expect(trailers).toEqual(new Map([['x-amz-checksum-crc32', 'AAAAAA==']]))
  })

  it('decodes a body with no trailer', async () => {
    expect((await decode('3\r\nabc\r\n0\r\n\r\n', 2)).body).toBe('abc')
  })

  it('passes an unsigned chunk on before it has all arrived', async () => {
    const source = decodeAwsChunked(pieces('a\r\n0123456789', 4), {
      signer: undefined,
      announcedTrailers: new Set(),
      onTrailers: () => undefined,
    })
    const first = await source.next()
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('0')
    await source.return(undefined)
  })

  it.each([
    ['a missing final chunk', '5\r\nhello\r\n', 'IncompleteBody'],
    ['a missing final empty line', '5\r\nhello\r\n0\r\n', 'IncompleteBody'],
    ['an unannounced trailer', '0\r\nx-amz-checksum-sha1:AAAA\r\n\r\n', 'InvalidRequest'],
    ['a trailer without a colon', '0\r\nx-amz-checksum-crc32\r\n\r\n', 'InvalidRequest'],
    [
      'a repeated trailer',
      '0\r\nx-amz-checksum-crc32:A\r\nx-amz-checksum-crc32:A\r\n\r\n',
      'InvalidRequest',
    ],
    ['a negative size', '-5\r\nhello\r\n0\r\n\r\n', 'InvalidRequest'],
    ['a size beyond 2^52', `${'f'.repeat(14)}\r\n`, 'InvalidRequest'],
    ['data not followed by CRLF', '5\r\nhello0\r\n\r\n', 'InvalidRequest'],
  ])('refuses %s', async (_, text, code) => {
    await expect(decode(text, 3)).rejects.toMatchObject({ code })
  })
})
