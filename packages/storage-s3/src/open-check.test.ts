import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { S3StoreError } from './s3-errors'
import { openS3Store } from './s3-store'
import type { S3StoreOptions } from './s3-store-options'

// The check at open, for what needs no S3 server: credentials that cannot be found, and an
// endpoint that answers something the check has no word for. The answers of a real one (a missing
// bucket, a refused key) are in test/s3-store.integration.test.ts, against Ceph RGW.

/** What the SDK's standard chain throws when no provider has credentials (@smithy/property-provider). */
function noCredentials(): Promise<never> {
  const error = new Error('Could not load credentials from any providers')
  error.name = 'CredentialsProviderError'
  return Promise.reject(error)
}

describe('opening a bucket', () => {
  let server: Server
  let endpoint: string

  beforeAll(async () => {
    // An endpoint that fails every request with a 500 and a body no S3 error has.
    server = createServer((_request, response) => {
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end('teapot on fire')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => {
        resolve()
      })
    })
  })

  /** Opens the bucket at the test's endpoint (`aws` drops it: AWS S3 itself), with `options`. */
  const open = (options: Partial<S3StoreOptions>, aws = false) => {
    const { endpoint: _endpoint, ...rest } = {
      bucket: 'cairn-state',
      endpoint,
      maxAttempts: 1,
      requestTimeoutMs: 2_000,
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      ...options,
    }
    return openS3Store(aws ? rest : { ...rest, endpoint }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
  }

  it('refuses without credentials in one line naming the bucket, the endpoint and the variables to set', async () => {
    const error = await open({ credentials: noCredentials })
    expect(error).toBeInstanceOf(S3StoreError)
    expect(error).toMatchObject({ code: 'credentials_missing' })
    const message = (error as Error).message
    expect(message).not.toContain('\n')
    expect(message).toContain('cairn-state')
    expect(message).toContain(endpoint)
    expect(message).toContain('AWS_ACCESS_KEY_ID')
    expect(message).toContain('AWS_PROFILE')
  })

  it('says to name an S3-compatible store with -s3-endpoint when none is given', async () => {
    const error = await open({ region: 'eu-west-1', credentials: noCredentials }, true)
    expect(error).toMatchObject({ code: 'credentials_missing' })
    expect((error as Error).message).toContain('AWS S3 (eu-west-1)')
    expect((error as Error).message).toContain('-s3-endpoint')
  })

  it('refuses an answer it has no word for in one line naming the bucket, the endpoint and the status', async () => {
    const error = await open({})
    expect(error).toBeInstanceOf(S3StoreError)
    expect(error).toMatchObject({ code: 'check_failed' })
    const message = (error as Error).message
    expect(message).not.toContain('\n')
    expect(message).toContain(`bucket cairn-state at ${endpoint}`)
    expect(message).toContain('HTTP 500')
  })
})
