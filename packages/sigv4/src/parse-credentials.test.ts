import { describe, expect, it } from 'vitest'
import { parseCredentials } from './parse-credentials'
import type { SignedRequest } from './signed-request'

const SIGNATURE = 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41'
const NOW = Date.UTC(2013, 4, 24)

function headerForm(headers: Record<string, string>, credentialDate = '20130524'): SignedRequest {
  return {
    method: 'GET',
    path: '/test.txt',
    query: '',
    headers: {
      host: 'examplebucket.s3.amazonaws.com',
      authorization: `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/${credentialDate}/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=${SIGNATURE}`,
      ...headers,
    },
  }
}

describe('parseCredentials, header form', () => {
  it('reads the key, token, date, scope, signed headers and payload mode', () => {
    const request = headerForm({
      'x-amz-date': '20130524T000000Z',
      'x-amz-content-sha256': 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      'x-amz-security-token': 'token',
    })
    expect(parseCredentials(request, { service: 's3', now: NOW })).toEqual({
      form: 'header',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      securityToken: 'token',
      date: NOW,
      amzDate: '20130524T000000Z',
      scope: { date: '20130524', region: 'us-east-1', service: 's3' },
      signedHeaders: ['host', 'x-amz-date'],
      signature: SIGNATURE,
      payload: { kind: 'streaming-unsigned-trailer' },
      payloadHash: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
    })
  })

  it('falls back on the Date header', () => {
    const request = headerForm({
      date: 'Fri, 24 May 2013 00:00:00 GMT',
      'x-amz-date': '',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
    })
    delete request.headers['x-amz-date']
    request.headers['authorization'] = (request.headers['authorization'] ?? '').replace(
      'x-amz-date',
      'date',
    )
    expect(parseCredentials(request, { service: 's3', now: NOW }).amzDate).toBe('20130524T000000Z')
  })

  it('refuses a request with no date', () => {
    expect(() =>
      parseCredentials(headerForm({ 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' }), {
        service: 's3',
        now: NOW,
      }),
    ).toThrow(expect.objectContaining({ code: 'AccessDenied' }))
  })

  it('refuses a scope dated another day than X-Amz-Date', () => {
    const request = headerForm(
      { 'x-amz-date': '20130524T000000Z', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
      '20130523',
    )
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining({ code: 'AuthorizationHeaderMalformed' }),
    )
  })

  it('refuses SignedHeaders without host', () => {
    const request = headerForm({
      'x-amz-date': '20130524T000000Z',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
    })
    request.headers['authorization'] = (request.headers['authorization'] ?? '').replace('host;', '')
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining({ code: 'AuthorizationHeaderMalformed' }),
    )
  })

  it('honours a tighter allowed skew', () => {
    const request = headerForm({
      'x-amz-date': '20130524T000000Z',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
    })
    expect(() =>
      parseCredentials(request, { service: 's3', now: NOW + 61_000, maxSkewMs: 60_000 }),
    ).toThrow(expect.objectContaining({ code: 'RequestTimeTooSkewed', status: 403 }))
  })

  it('assumes an empty body for another service that sends no payload hash', () => {
    const request = headerForm({ 'x-amz-date': '20130524T000000Z' }, '20130524')
    request.headers['authorization'] = (request.headers['authorization'] ?? '').replace(
      '/s3/',
      '/sts/',
    )
    expect(parseCredentials(request, { service: 'sts', now: NOW }).payload).toEqual({
      kind: 'sha256',
      hex: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    })
  })
})

describe('parseCredentials, presigned form', () => {
  const query = (extra = '') =>
    `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=${SIGNATURE}${extra}`
  const presigned = (extra = ''): SignedRequest => ({
    method: 'GET',
    path: '/test.txt',
    query: query(extra),
    headers: { host: 'examplebucket.s3.amazonaws.com' },
  })

  it('reads the query and takes the payload as unsigned', () => {
    expect(
      parseCredentials(presigned('&X-Amz-Security-Token=a%2Bb'), { service: 's3', now: NOW }),
    ).toMatchObject({
      form: 'presigned',
      accessKeyId: 'AKID',
      securityToken: 'a+b',
      expiresSeconds: 60,
      payload: { kind: 'unsigned' },
      payloadHash: 'UNSIGNED-PAYLOAD',
    })
  })

  it.each([
    ['another algorithm', (q: string) => q.replace('AWS4-HMAC-SHA256', 'AWS4-ECDSA-P256-SHA256')],
    ['a zero expiry', (q: string) => q.replace('X-Amz-Expires=60', 'X-Amz-Expires=0')],
    [
      'a bad date',
      (q: string) => q.replace('X-Amz-Date=20130524T000000Z', 'X-Amz-Date=2013-05-24'),
    ],
    ['a repeated signature', (q: string) => `${q}&X-Amz-Signature=${SIGNATURE}`],
    ['another service', (q: string) => q.replace('%2Fs3%2F', '%2Fsqs%2F')],
  ])('refuses %s', (_, change) => {
    const request = presigned()
    request.query = change(request.query)
    expect(() => parseCredentials(request, { service: 's3', now: NOW })).toThrow(
      expect.objectContaining({ code: 'AuthorizationQueryParametersError' }),
    )
  })
})
