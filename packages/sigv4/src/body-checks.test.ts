import { describe, expect, it } from 'vitest'
import { BodyVerifier, planBody } from './body-checks'
import type { SignedRequest } from './signed-request'

const request = (headers: Record<string, string>): SignedRequest => ({
  method: 'PUT',
  path: '/b/k',
  query: '',
  headers,
})

describe('planBody', () => {
  it('reads the declared length of a plain and of an aws-chunked body', () => {
    expect(planBody(request({ 'content-length': '5' }), { kind: 'unsigned' }).length).toBe(5)
    const chunked = request({ 'content-length': '90', 'x-amz-decoded-content-length': '5' })
    expect(planBody(chunked, { kind: 'streaming-unsigned-trailer' }).length).toBe(5)
  })

  it('refuses a length that is not a number', () => {
    expect(() => planBody(request({ 'content-length': '5x' }), { kind: 'unsigned' })).toThrow(
      expect.objectContaining({ code: 'InvalidArgument' }),
    )
  })

  it('refuses x-amz-trailer without a trailer payload mode', () => {
    const announced = request({ 'x-amz-trailer': 'x-amz-checksum-crc32' })
    expect(() => planBody(announced, { kind: 'unsigned' })).toThrow(
      expect.objectContaining({ code: 'InvalidRequest' }),
    )
  })
})

describe('BodyVerifier', () => {
  it('refuses more bytes than declared as soon as they come', () => {
    const verifier = new BodyVerifier(
      planBody(request({ 'content-length': '3' }), { kind: 'unsigned' }),
    )
    verifier.update(Buffer.from('abc'))
    expect(() => {
      verifier.update(Buffer.from('d'))
    }).toThrow(expect.objectContaining({ code: 'InvalidRequest' }))
  })

  it('checks a Content-MD5 and a checksum header together', () => {
    const plan = planBody(
      request({
        'content-md5': 'kAFQmDzST7DWlj99KOF/cg==',
        'x-amz-checksum-sha1': 'qZk+NkcGgWq6PiVxeFDCbJzQ2J0=',
      }),
      { kind: 'unsigned' },
    )
    const verifier = new BodyVerifier(plan)
    verifier.update(Buffer.from('abc'))
    verifier.finish(new Map())
    const wrong = new BodyVerifier(plan)
    wrong.update(Buffer.from('abd'))
    expect(() => {
      wrong.finish(new Map())
    }).toThrow(expect.objectContaining({ code: 'BadDigest' }))
  })
})
