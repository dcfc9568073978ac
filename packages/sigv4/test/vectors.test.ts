import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { parseCredentials, verifySignature } from '../src/index'
import { parseRawRequest } from './raw-request'
import { VECTOR_CREDENTIALS, VECTOR_DATE, VECTORS } from './vectors'

const NAMES = VECTORS.map((vector) => vector.name)

describe('the AWS SigV4 test suite', () => {
  it('holds the vectors this package promises to pass', () => {
    for (const name of [
      'get-vanilla',
      'get-vanilla-query',
      'get-vanilla-query-order-key-case',
      'get-vanilla-query-unreserved',
      'get-vanilla-utf8-query',
      'get-utf8',
      'get-space',
      'get-slash',
      'get-slashes',
      'get-slash-dot-slash',
      'get-slash-pointless-dot',
      'get-relative',
      'get-relative-relative',
      'get-header-key-duplicate',
      'get-header-value-multiline',
      'get-header-value-order',
      'get-header-value-trim',
      'post-header-key-case',
      'post-header-key-sort',
      'post-header-value-case',
      'post-vanilla',
      'post-vanilla-query',
      'post-x-www-form-urlencoded',
      'post-x-www-form-urlencoded-parameters',
      'post-sts-header-after',
      'post-sts-header-before',
    ]) {
      expect(NAMES).toContain(name)
    }
  })

  it.each(VECTORS)('verifies $name', async ({ lines, authorization }) => {
    const { request, body } = parseRawRequest(lines)
    request.headers['authorization'] = authorization
    const credentials = parseCredentials(request, { service: 'service', now: VECTOR_DATE })
    expect(credentials.accessKeyId).toBe(VECTOR_CREDENTIALS.accessKeyId)
    const verified = await verifySignature(
      request,
      credentials,
      VECTOR_CREDENTIALS.secretAccessKey,
      {
        uriEscapePath: true,
        payloadHash: createHash('sha256').update(body).digest('hex'),
      },
    )
    expect(verified.credentials.signature).toBe(authorization.slice(-64))
  })

  it.each(VECTORS)('refuses $name with another secret', async ({ lines, authorization }) => {
    const { request, body } = parseRawRequest(lines)
    request.headers['authorization'] = authorization
    const credentials = parseCredentials(request, { service: 'service', now: VECTOR_DATE })
    await expect(
      verifySignature(request, credentials, 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEX', {
        uriEscapePath: true,
        payloadHash: createHash('sha256').update(body).digest('hex'),
      }),
    ).rejects.toMatchObject({ code: 'SignatureDoesNotMatch', status: 403 })
  })

  it('reads the session token of post-sts-header-before', () => {
    const vector = VECTORS.find(({ name }) => name === 'post-sts-header-before')
    const { request } = parseRawRequest(vector?.lines ?? [])
    request.headers['authorization'] = vector?.authorization ?? ''
    expect(
      parseCredentials(request, { service: 'service', now: VECTOR_DATE }).securityToken,
    ).toMatch(/^AQoDYXdzEPT/)
  })
})
