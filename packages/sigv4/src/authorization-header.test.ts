import { describe, expect, it } from 'vitest'
import { parseAuthorizationHeader } from './authorization-header'

const SIGNATURE = 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'

describe('parseAuthorizationHeader', () => {
  it('reads the three parts whatever their order and spacing', () => {
    const expected = {
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      scope: { date: '20130524', region: 'us-east-1', service: 's3' },
      signedHeaders: ['host', 'range', 'x-amz-content-sha256', 'x-amz-date'],
      signature: SIGNATURE,
    }
    const credential = 'Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request'
    const signed = 'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date'
    expect(
      parseAuthorizationHeader(`AWS4-HMAC-SHA256 ${credential}, ${signed}, Signature=${SIGNATURE}`),
    ).toEqual(expected)
    expect(
      parseAuthorizationHeader(`AWS4-HMAC-SHA256 Signature=${SIGNATURE},${credential},${signed}`),
    ).toEqual(expected)
  })

  it('refuses another algorithm', () => {
    expect(() => parseAuthorizationHeader('AWS AKID:sig')).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    )
  })

  it.each([
    ['a missing part', 'Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders=host'],
    [
      'a bad scope',
      `Credential=AKID/20130524/us-east-1/s3, SignedHeaders=host, Signature=${SIGNATURE}`,
    ],
    [
      'a short signature',
      'Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=ab',
    ],
    [
      'an upper-case signed header',
      `Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders=Host, Signature=${SIGNATURE}`,
    ],
    [
      'a part without =',
      `Credential=AKID/20130524/us-east-1/s3/aws4_request, SignedHeaders, Signature=${SIGNATURE}`,
    ],
  ])('refuses %s', (_, parts) => {
    expect(() => parseAuthorizationHeader(`AWS4-HMAC-SHA256 ${parts}`)).toThrow(
      expect.objectContaining({ code: 'AuthorizationHeaderMalformed' }),
    )
  })
})
