import { describe, expect, it } from 'vitest'
import { serverSideEncryption } from './s3-encryption'
import { S3Error } from './s3-errors'

const headers = (given: Record<string, string>) => (name: string) => given[name]
const refusalOf = (call: () => unknown): string => {
  try {
    call()
  } catch (error) {
    if (error instanceof S3Error) return `${error.code}: ${error.message}`
    throw error
  }
  return 'honoured'
}
const AT_REST = { kek: 'k2' }

describe('server-side encryption headers', () => {
  it('asks nothing of a request without them', () => {
    expect(serverSideEncryption(headers({}), undefined)).toEqual({})
    expect(serverSideEncryption(headers({}), AT_REST)).toEqual({})
  })

  it('honours AES256 and aws:kms with the current key when the server encrypts at rest', () => {
    const aes = headers({ 'x-amz-server-side-encryption': 'AES256' })
    expect(serverSideEncryption(aes, AT_REST)).toEqual({ 'x-amz-server-side-encryption': 'AES256' })
    for (const key of [undefined, 'k2', 'alias/k2', 'arn:aws:kms:eu-west-1:111122223333:key/k2']) {
      const kms = headers({
        'x-amz-server-side-encryption': 'aws:kms',
        ...(key === undefined ? {} : { 'x-amz-server-side-encryption-aws-kms-key-id': key }),
      })
      expect(serverSideEncryption(kms, AT_REST)).toEqual({
        'x-amz-server-side-encryption': 'aws:kms',
        'x-amz-server-side-encryption-aws-kms-key-id': 'k2',
      })
    }
  })

  it('refuses them without encryption at rest, naming the header and the remedy', () => {
    const refused = refusalOf(() =>
      serverSideEncryption(headers({ 'x-amz-server-side-encryption': 'AES256' }), undefined),
    )
    expect(refused).toMatch(/^InvalidArgument: .*start it with -encryption-keys/)
    expect(refused).toContain('(x-amz-server-side-encryption)')
  })

  it('refuses another KMS key, another algorithm, and a key without aws:kms', () => {
    expect(
      refusalOf(() =>
        serverSideEncryption(
          headers({
            'x-amz-server-side-encryption': 'aws:kms',
            'x-amz-server-side-encryption-aws-kms-key-id': 'k1',
          }),
          AT_REST,
        ),
      ),
    ).toContain('is not the key this server encrypts with; name k2')
    expect(
      refusalOf(() =>
        serverSideEncryption(headers({ 'x-amz-server-side-encryption': 'aws:kms:dsse' }), AT_REST),
      ),
    ).toContain('"aws:kms:dsse" is not supported')
    expect(
      refusalOf(() =>
        serverSideEncryption(
          headers({ 'x-amz-server-side-encryption-aws-kms-key-id': 'k2' }),
          AT_REST,
        ),
      ),
    ).toMatch(/^InvalidArgument/)
  })

  it('refuses customer-provided keys on writes and reads alike', () => {
    const customer = headers({
      'x-amz-server-side-encryption-customer-algorithm': 'AES256',
      'x-amz-server-side-encryption-customer-key': 'a2V5',
      'x-amz-server-side-encryption-customer-key-md5': 'bWQ1',
    })
    for (const reads of [false, true]) {
      expect(refusalOf(() => serverSideEncryption(customer, AT_REST, { reads }))).toContain(
        'customer-provided keys (SSE-C',
      )
    }
    // A read's other headers are a write's business.
    expect(
      serverSideEncryption(headers({ 'x-amz-server-side-encryption': 'AES256' }), undefined, {
        reads: true,
      }),
    ).toEqual({})
  })
})
