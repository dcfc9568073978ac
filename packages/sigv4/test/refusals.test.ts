import { describe, expect, it } from 'vitest'
import { createDigest } from '../src/checksum'
import {
  parseCredentials,
  verifySignature,
  type SigV4ErrorCode,
  type SignedRequest,
} from '../src/index'
import { parseRawRequest } from './raw-request'
import { STREAMING_EXAMPLE } from './s3-streaming-example'
import { checksumOf, encodeChunked, NOW, SECRET, signS3 } from './sign'
import { collect, inPieces } from './streams'

const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
const MINUTE = 60_000

function refusal(code: SigV4ErrorCode): { name: string; code: SigV4ErrorCode } {
  return { name: 'SigV4Error', code }
}

/** Parses, verifies and reads the whole body, as the server will. */
async function accept(
  request: SignedRequest,
  body: Uint8Array | string = '',
  options: { now?: number; secret?: string; piece?: number } = {},
): Promise<Buffer> {
  const credentials = parseCredentials(request, { service: 's3', now: options.now ?? NOW })
  const verified = await verifySignature(request, credentials, options.secret ?? SECRET)
  return collect(verified.body(inPieces(body, options.piece ?? 5)))
}

const getObject = () =>
  signS3({
    method: 'GET',
    path: '/tfstate/env%3A/dev/app/terraform.tfstate',
    headers: { range: 'bytes=0-9', 'x-amz-content-sha256': EMPTY },
  })

describe('the signature', () => {
  it('verifies as signed', async () => {
    await expect(accept(await getObject())).resolves.toEqual(Buffer.alloc(0))
  })

  it('refuses a tampered signature', async () => {
    const request = await getObject()
    const authorization = request.headers['authorization'] ?? ''
    request.headers['authorization'] =
      `${authorization.slice(0, -1)}${authorization.endsWith('0') ? '1' : '0'}`
    await expect(accept(request)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })

  it('refuses the wrong secret', async () => {
    await expect(accept(await getObject(), '', { secret: `${SECRET}x` })).rejects.toMatchObject(
      refusal('SignatureDoesNotMatch'),
    )
  })

  it('refuses a signed header changed after signing', async () => {
    const request = await getObject()
    request.headers['range'] = 'bytes=0-99'
    await expect(accept(request)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })

  it('refuses a path changed after signing', async () => {
    const request = await getObject()
    request.path = '/tfstate/env%3A/prod/app/terraform.tfstate'
    await expect(accept(request)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })

  it('accepts a key whether its reserved characters come encoded or not', async () => {
    const request = await getObject()
    request.path = '/tfstate/env:/dev/app/terraform.tfstate'
    await expect(accept(request)).resolves.toEqual(Buffer.alloc(0))
  })

  it('accepts a path signed exactly as it was sent, as the Go SDK signs behind a prefixed endpoint', async () => {
    const request = await signS3({
      method: 'PUT',
      path: '/s3/tfstate/env:/dev/app/terraform.tfstate.tflock',
      headers: { 'x-amz-content-sha256': EMPTY },
    })
    await expect(accept(request)).resolves.toEqual(Buffer.alloc(0))
    request.path = '/s3/tfstate/env:/prod/app/terraform.tfstate.tflock'
    await expect(accept(request)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })

  it('still verifies with unsigned headers added by a proxy', async () => {
    const request = await getObject()
    request.headers['x-forwarded-for'] = '10.0.0.1'
    request.headers['user-agent'] = 'proxy/1.0'
    request.headers['x-amz-meta-added'] = 'later'
    await expect(accept(request)).resolves.toEqual(Buffer.alloc(0))
  })

  it('refuses a request missing a header it signed', async () => {
    const request = await getObject()
    delete request.headers['range']
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining(refusal('SignatureDoesNotMatch')),
    )
  })

  it('refuses a scope naming another service', async () => {
    const request = await signS3({
      method: 'GET',
      path: '/tfstate/x.tfstate',
      headers: { 'x-amz-content-sha256': EMPTY },
      service: 'sts',
    })
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining(refusal('AuthorizationHeaderMalformed')),
    )
  })

  it('refuses a request without x-amz-content-sha256', async () => {
    const request = await signS3({ method: 'GET', path: '/tfstate/x.tfstate', headers: {} })
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining(refusal('InvalidRequest')),
    )
  })

  it('refuses both an Authorization header and a presigned query', async () => {
    const request = await getObject()
    request.query = 'X-Amz-Algorithm=AWS4-HMAC-SHA256'
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining(refusal('InvalidArgument')),
    )
  })

  it('tells a request without authentication apart', () => {
    const request: SignedRequest = { method: 'GET', path: '/', query: '', headers: { host: 'h' } }
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining({ code: 'MissingAuthenticationToken', status: 403 }),
    )
  })
})

describe('the clock', () => {
  it.each([
    ['16 minutes ahead', 16 * MINUTE, 'RequestTimeTooSkewed'],
    ['16 minutes behind', -16 * MINUTE, 'RequestTimeTooSkewed'],
  ] as const)('refuses a request %s', async (_, offset, code) => {
    const request = await getObject()
    expect(() => parseCredentials(request, { service: 's3', now: NOW + offset })).toThrow(
      expect.objectContaining(refusal(code)),
    )
  })

  it.each([14 * MINUTE, -14 * MINUTE])('accepts a skew of %i ms', async (offset) => {
    await expect(accept(await getObject(), '', { now: NOW + offset })).resolves.toBeDefined()
  })
})

describe('presigned URLs', () => {
  const presigned = (expires: string, date = '20130524T000000Z') => {
    const { request } = parseRawRequest([
      `GET /test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=${date}&X-Amz-Expires=${expires}&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404 HTTP/1.1`,
      'Host:examplebucket.s3.amazonaws.com',
    ])
    return request
  }
  const signedAt = Date.UTC(2013, 4, 24)

  it('accepts until its expiry and refuses after', () => {
    const request = presigned('86400')
    expect(parseCredentials(request, { service: 's3', now: signedAt + 86400_000 }).form).toBe(
      'presigned',
    )
    expect(() => parseCredentials(request, { service: 's3', now: signedAt + 86401_000 })).toThrow(
      expect.objectContaining({ code: 'AccessDenied', message: 'Request has expired' }),
    )
  })

  it('refuses an expiry beyond a week', () => {
    expect(() => parseCredentials(presigned('604801'), { service: 's3', now: signedAt })).toThrow(
      expect.objectContaining(refusal('AuthorizationQueryParametersError')),
    )
  })

  it('refuses a URL dated too far in the future as AWS does', () => {
    expect(() =>
      parseCredentials(presigned('86400'), { service: 's3', now: signedAt - 16 * MINUTE }),
    ).toThrow(
      expect.objectContaining({ code: 'AccessDenied', message: 'Request is not valid yet' }),
    )
  })

  it('refuses a URL missing a parameter', () => {
    const request = presigned('86400')
    request.query = request.query.replace(/&X-Amz-SignedHeaders=host/, '')
    expect(() => parseCredentials(request, { service: 's3', now: signedAt })).toThrow(
      expect.objectContaining(refusal('AuthorizationQueryParametersError')),
    )
  })

  it('refuses a URL whose query was changed', async () => {
    const request = presigned('86400')
    request.query += '&response-content-type=text%2Fhtml'
    const credentials = parseCredentials(request, { service: 's3', now: signedAt })
    await expect(
      verifySignature(request, credentials, STREAMING_EXAMPLE.secret),
    ).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })
})

describe('a plain body', () => {
  const put = (body: string, headers: Record<string, string> = {}) =>
    signS3({
      method: 'PUT',
      path: '/tfstate/app/terraform.tfstate',
      headers: {
        'content-length': String(Buffer.byteLength(body)),
        'x-amz-content-sha256': createDigest('sha256').digest().toString('hex'),
        ...headers,
      },
    })

  it('refuses a body whose sha256 is not the signed one', async () => {
    const request = await signS3({
      method: 'PUT',
      path: '/tfstate/app/terraform.tfstate',
      headers: {
        'x-amz-content-sha256': '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072',
      },
    })
    await expect(accept(request, 'Welcome to Amazon S3.')).resolves.toBeDefined()
    await expect(accept(request, 'Welcome to Amazon S3!')).rejects.toMatchObject(
      refusal('XAmzContentSHA256Mismatch'),
    )
  })

  it.each(['sha1', 'sha256', 'md5'] as const)(
    'refuses a body that fails its %s header',
    async (algorithm) => {
      const name = algorithm === 'md5' ? 'content-md5' : `x-amz-checksum-${algorithm}`
      const request = await put('', { [name]: checksumOf(algorithm, 'other bytes') })
      await expect(accept(request, '')).rejects.toMatchObject(refusal('BadDigest'))
      const good = await put('', { [name]: checksumOf(algorithm, '') })
      await expect(accept(good, '')).resolves.toEqual(Buffer.alloc(0))
    },
  )

  it('refuses a malformed checksum header before reading the body', async () => {
    const request = await put('', { 'x-amz-checksum-crc32': 'not-a-crc' })
    const credentials = parseCredentials(request, { service: 's3', now: NOW })
    await expect(verifySignature(request, credentials, SECRET)).rejects.toMatchObject(
      refusal('InvalidDigest'),
    )
  })

  it('refuses a body shorter than its Content-Length', async () => {
    const request = await signS3({
      method: 'PUT',
      path: '/tfstate/app/terraform.tfstate',
      headers: { 'content-length': '10', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    })
    await expect(accept(request, '12345')).rejects.toMatchObject(refusal('IncompleteBody'))
  })
})

describe('aws-chunked bodies', () => {
  const BODY =
    '{"ID":"5f406074","Operation":"OperationTypeApply","Path":"tfstate/app/terraform.tfstate"}'
  const base64 = (algorithm: 'crc32' | 'crc32c' | 'sha1' | 'sha256', data: string) => {
    const digest = createDigest(algorithm)
    digest.update(Buffer.from(data))
    return digest.digest().toString('base64')
  }
  const unsignedTrailer = (algorithm: 'crc32' | 'crc32c' | 'sha1' | 'sha256', encoded: Buffer) =>
    signS3({
      method: 'PUT',
      path: '/tfstate/app/terraform.tfstate.tflock',
      headers: {
        'content-encoding': 'aws-chunked',
        'content-length': String(encoded.length),
        'if-none-match': '*',
        'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
        'x-amz-decoded-content-length': String(BODY.length),
        'x-amz-trailer': `x-amz-checksum-${algorithm}`,
      },
    })

  it("decodes Terraform's exact body: one chunk and an unsigned sha256 trailer", async () => {
    const encoded = Buffer.from(
      `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\nx-amz-checksum-sha256:${base64('sha256', BODY)}\r\n\r\n`,
    )
    expect(encoded).toEqual(
      encodeChunked([BODY], { trailers: [['x-amz-checksum-sha256', base64('sha256', BODY)]] }),
    )
    const request = await unsignedTrailer('sha256', encoded)
    for (const piece of [1, 3, 1024]) {
      expect((await accept(request, encoded, { piece })).toString()).toBe(BODY)
    }
  })

  it.each(['crc32', 'crc32c', 'sha1', 'sha256'] as const)(
    'refuses a wrong %s trailer',
    async (algorithm) => {
      const name = `x-amz-checksum-${algorithm}`
      const good = encodeChunked([BODY.slice(0, 10), BODY.slice(10)], {
        trailers: [[name, base64(algorithm, BODY)]],
      })
      await expect(accept(await unsignedTrailer(algorithm, good), good)).resolves.toEqual(
        Buffer.from(BODY),
      )
      const bad = encodeChunked([BODY], { trailers: [[name, base64(algorithm, `${BODY} `)]] })
      await expect(accept(await unsignedTrailer(algorithm, bad), bad)).rejects.toMatchObject(
        refusal('BadDigest'),
      )
    },
  )

  it('refuses a trailer that was not announced, and a missing one', async () => {
    const other = encodeChunked([BODY], {
      trailers: [['x-amz-checksum-crc32', base64('crc32', BODY)]],
    })
    await expect(accept(await unsignedTrailer('sha256', other), other)).rejects.toMatchObject(
      refusal('InvalidRequest'),
    )
    const none = encodeChunked([BODY])
    await expect(accept(await unsignedTrailer('sha256', none), none)).rejects.toMatchObject(
      refusal('InvalidRequest'),
    )
  })

  it('refuses a trailer of an unknown algorithm before reading the body', async () => {
    const announced = await signS3({
      method: 'PUT',
      path: '/x.tfstate',
      headers: {
        'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
        'x-amz-trailer': 'x-amz-checksum-crc64nvme',
      },
    })
    await expect(
      verifySignature(announced, parseCredentials(announced, { service: 's3', now: NOW }), SECRET),
    ).rejects.toMatchObject(refusal('InvalidRequest'))
  })

  it('refuses a truncated body', async () => {
    const encoded = encodeChunked([BODY], {
      trailers: [['x-amz-checksum-crc32', base64('crc32', BODY)]],
    })
    const request = await unsignedTrailer('crc32', encoded)
    for (const cut of [5, 20, encoded.length - 10, encoded.length - 1]) {
      await expect(accept(request, encoded.subarray(0, cut))).rejects.toMatchObject(
        refusal('IncompleteBody'),
      )
    }
  })

  it.each([
    ['a size that is not hex', `zz\r\n${BODY}\r\n0\r\n\r\n`],
    ['a size line without CR', `${BODY.length.toString(16)}\n${BODY}\r\n0\r\n\r\n`],
    ['a chunk longer than its size', `10\r\n${BODY}\r\n0\r\n\r\n`],
    ['bytes after the end', `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\nmore`],
    ['an endless size line', 'f'.repeat(5000)],
  ])('refuses %s', async (_, encoded) => {
    const request = await signS3({
      method: 'PUT',
      path: '/x.tfstate',
      headers: {
        'content-encoding': 'aws-chunked',
        'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      },
    })
    await expect(accept(request, encoded)).rejects.toMatchObject(refusal('InvalidRequest'))
  })

  it('refuses a body longer than its decoded length', async () => {
    const encoded = encodeChunked([BODY, 'extra'])
    const request = await signS3({
      method: 'PUT',
      path: '/x.tfstate',
      headers: {
        'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
        'x-amz-decoded-content-length': String(BODY.length),
      },
    })
    await expect(accept(request, encoded)).rejects.toMatchObject(refusal('InvalidRequest'))
  })
})

describe('signed chunks', () => {
  const streaming = () => parseRawRequest(STREAMING_EXAMPLE.lines).request
  const exampleAccept = (body: string, piece = 4096) =>
    accept(streaming(), body, {
      now: STREAMING_EXAMPLE.now,
      secret: STREAMING_EXAMPLE.secret,
      piece,
    })

  it('refuses a tampered chunk signature', async () => {
    const body = STREAMING_EXAMPLE.body.replace('chunk-signature=0055', 'chunk-signature=0056')
    await expect(exampleAccept(body)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
  })

  it('refuses changed chunk data, and passes on none of that chunk', async () => {
    const body = `${STREAMING_EXAMPLE.body.slice(0, 200)}b${STREAMING_EXAMPLE.body.slice(201)}`
    const credentials = parseCredentials(streaming(), { service: 's3', now: STREAMING_EXAMPLE.now })
    const verified = await verifySignature(streaming(), credentials, STREAMING_EXAMPLE.secret)
    let passed = 0
    await expect(
      (async () => {
        for await (const chunk of verified.body(inPieces(body, 1000))) passed += chunk.length
      })(),
    ).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
    expect(passed).toBe(0)
  })

  it('refuses a chunk without its signature', async () => {
    const body = STREAMING_EXAMPLE.body.replace(/;chunk-signature=[0-9a-f]{64}/, '')
    await expect(exampleAccept(body)).rejects.toMatchObject(refusal('InvalidRequest'))
  })

  it('refuses a truncated signed body', async () => {
    await expect(exampleAccept(STREAMING_EXAMPLE.body.slice(0, -2))).rejects.toMatchObject(
      refusal('IncompleteBody'),
    )
  })

  describe('with a signed trailer (STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER)', () => {
    const BODY = 'a'.repeat(3000)
    const request = async (encodedLength: number) =>
      signS3({
        method: 'PUT',
        path: '/tfstate/big.tfstate',
        headers: {
          'content-encoding': 'aws-chunked',
          'content-length': String(encodedLength),
          'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER',
          'x-amz-decoded-content-length': String(BODY.length),
          'x-amz-trailer': 'x-amz-checksum-crc32c',
        },
      })
    const seedOf = (signed: SignedRequest) => (signed.headers['authorization'] ?? '').slice(-64)
    const crc = () => {
      const digest = createDigest('crc32c')
      digest.update(Buffer.from(BODY))
      return digest.digest().toString('base64')
    }

    it('verifies chunks and trailer, byte at a time too', async () => {
      const signed = await request(3200)
      const body = encodeChunked([BODY.slice(0, 1024), BODY.slice(1024)], {
        seed: seedOf(signed),
        trailers: [['x-amz-checksum-crc32c', crc()]],
      })
      expect((await accept(signed, body, { piece: 1 })).toString()).toBe(BODY)
    })

    it('refuses a tampered trailer signature', async () => {
      const signed = await request(1)
      const body = encodeChunked([BODY], {
        seed: seedOf(signed),
        trailers: [['x-amz-checksum-crc32c', crc()]],
      })
      const tampered = Buffer.from(
        body.toString('latin1').replace(/(x-amz-trailer-signature:[0-9a-f]{63})[0-9a-f]/, '$1x'),
        'latin1',
      )
      await expect(accept(signed, tampered)).rejects.toMatchObject(refusal('SignatureDoesNotMatch'))
    })

    it('refuses an unsigned trailer', async () => {
      const signed = await request(1)
      const body = encodeChunked([BODY], {
        seed: seedOf(signed),
        trailers: [['x-amz-checksum-crc32c', crc()]],
      })
      const stripped = Buffer.from(
        body.toString('latin1').replace(/x-amz-trailer-signature:[0-9a-f]{64}\r\n/, ''),
        'latin1',
      )
      await expect(accept(signed, stripped)).rejects.toMatchObject(refusal('InvalidRequest'))
    })

    it('refuses a signed chunk over the cap', async () => {
      const signed = await request(1)
      const line = `1000001;chunk-signature=${'0'.repeat(64)}\r\n`
      await expect(accept(signed, line)).rejects.toMatchObject(refusal('InvalidRequest'))
    })
  })
})
