import { getSigningKey } from '@smithy/signature-v4'
import { describe, expect, it } from 'vitest'
import { ChunkSigner, signaturesEqual } from './chunk-signer'
import { Sha256, sha256Hex } from './sha256'

// The chain of the S3 API Reference's chunked-upload example: seed, then 64 KiB, 1 KiB, 0 bytes.
const SEED = '4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9'
const CHUNKS = [
  ['a'.repeat(65536), 'ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648'],
  ['a'.repeat(1024), '0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497'],
  ['', 'b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9'],
] as const

async function signer(): Promise<ChunkSigner> {
  const signingKey = await getSigningKey(
    Sha256,
    {
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    },
    '20130524',
    'us-east-1',
    's3',
  )
  return new ChunkSigner({
    signingKey,
    amzDate: '20130524T000000Z',
    scope: '20130524/us-east-1/s3/aws4_request',
    seedSignature: SEED,
  })
}

describe('ChunkSigner', () => {
  it('accepts the published chain of chunk signatures', async () => {
    const chain = await signer()
    for (const [data, signature] of CHUNKS) chain.verifyChunk(signature, sha256Hex(data))
  })

  it('refuses the chain out of order', async () => {
    const chain = await signer()
    const [, second] = CHUNKS
    expect(() => {
      chain.verifyChunk(second[1], sha256Hex(second[0]))
    }).toThrow(expect.objectContaining({ code: 'SignatureDoesNotMatch' }))
  })

  it('compares signatures of any length without throwing', () => {
    expect(signaturesEqual('ab', 'ab')).toBe(true)
    expect(signaturesEqual('ab', 'abc')).toBe(false)
  })
})
