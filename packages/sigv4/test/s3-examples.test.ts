import { describe, expect, it } from 'vitest'
import { parseCredentials, verifySignature } from '../src/index'
import { parseRawRequest } from './raw-request'
import { STREAMING_EXAMPLE } from './s3-streaming-example'
import { collect, inPieces } from './streams'

/**
 * The examples of the Amazon S3 API Reference, "Authenticating Requests (AWS Signature Version 4)":
 * "Examples: Signature calculations" (header form), "Transferring payload in multiple chunks"
 * (streaming) and "Query string authentication" (presigned). The signatures are the published ones.
 */
const { secret: SECRET, now: NOW } = STREAMING_EXAMPLE
const CREDENTIAL = 'Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request'
const EMPTY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'

async function verify(lines: string[], body = '') {
  const { request } = parseRawRequest(lines)
  const credentials = parseCredentials(request, { service: 's3', now: NOW })
  const verified = await verifySignature(request, credentials, SECRET)
  return { verified, body: await collect(verified.body(inPieces(body, 7))) }
}

describe('the S3 documentation examples', () => {
  it('verifies GET Object with a Range', async () => {
    await verify([
      'GET /test.txt HTTP/1.1',
      'Host:examplebucket.s3.amazonaws.com',
      'Range:bytes=0-9',
      `x-amz-content-sha256:${EMPTY}`,
      'x-amz-date:20130524T000000Z',
      `Authorization:AWS4-HMAC-SHA256 ${CREDENTIAL},SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41`,
    ])
  })

  it('verifies PUT Object, its body and its $ in the key', async () => {
    const { body } = await verify(
      [
        'PUT /test$file.text HTTP/1.1',
        'Host:examplebucket.s3.amazonaws.com',
        'Date:Fri, 24 May 2013 00:00:00 GMT',
        'x-amz-date:20130524T000000Z',
        'x-amz-storage-class:REDUCED_REDUNDANCY',
        'x-amz-content-sha256:44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072',
        `Authorization:AWS4-HMAC-SHA256 ${CREDENTIAL},SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd`,
      ],
      'Welcome to Amazon S3.',
    )
    expect(body.toString()).toBe('Welcome to Amazon S3.')
  })

  it('verifies GET Bucket Lifecycle', async () => {
    await verify([
      'GET /?lifecycle HTTP/1.1',
      'Host:examplebucket.s3.amazonaws.com',
      'x-amz-date:20130524T000000Z',
      `x-amz-content-sha256:${EMPTY}`,
      `Authorization:AWS4-HMAC-SHA256 ${CREDENTIAL},SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543`,
    ])
  })

  it('verifies Get Bucket (List Objects)', async () => {
    await verify([
      'GET /?max-keys=2&prefix=J HTTP/1.1',
      'Host:examplebucket.s3.amazonaws.com',
      'x-amz-date:20130524T000000Z',
      `x-amz-content-sha256:${EMPTY}`,
      `Authorization:AWS4-HMAC-SHA256 ${CREDENTIAL},SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7`,
    ])
  })

  it('verifies the presigned GET of test.txt', async () => {
    const query = [
      'X-Amz-Algorithm=AWS4-HMAC-SHA256',
      'X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request',
      'X-Amz-Date=20130524T000000Z',
      'X-Amz-Expires=86400',
      'X-Amz-SignedHeaders=host',
      'X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    ].join('&')
    const { verified } = await verify([
      `GET /test.txt?${query} HTTP/1.1`,
      'Host:examplebucket.s3.amazonaws.com',
    ])
    expect(verified.credentials).toMatchObject({
      form: 'presigned',
      expiresSeconds: 86400,
      payload: { kind: 'unsigned' },
    })
  })
})

describe('the S3 streaming example (STREAMING-AWS4-HMAC-SHA256-PAYLOAD)', () => {
  it('has the published encoded length', () => {
    expect(STREAMING_EXAMPLE.body.length).toBe(66824)
  })

  it.each([1, 100, 65536, 1 << 20])(
    'verifies and decodes it in pieces of %i bytes',
    async (size) => {
      const { request } = parseRawRequest(STREAMING_EXAMPLE.lines)
      const credentials = parseCredentials(request, { service: 's3', now: NOW })
      expect(credentials.payload).toEqual({ kind: 'streaming-signed' })
      const verified = await verifySignature(request, credentials, SECRET)
      expect(verified.decodedLength).toBe(66560)
      const body = await collect(verified.body(inPieces(STREAMING_EXAMPLE.body, size)))
      expect(body.toString()).toBe('a'.repeat(66560))
    },
  )
})
