import { S3Client, S3ServiceException, type S3ClientConfig } from '@aws-sdk/client-s3'
import { expect } from 'vitest'

/** What `POST /v1/auth/issue-s3-creds` answers: AWS's `credential_process` shape. */
export interface S3Credentials {
  Version: 1
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
  Expiration: string
}

/** S3 session credentials for the holder of `token`, failing the test unless they are issued. */
export async function issueS3Credentials(url: string, token: string): Promise<S3Credentials> {
  const issued = await fetch(`${url}/v1/auth/issue-s3-creds`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
  })
  const text = await issued.text()
  expect(issued.status, text).toBe(200)
  return JSON.parse(text) as S3Credentials
}

/**
 * The real AWS SDK pointed at the server's `/s3`, path style, with the SDK's default checksum
 * settings (a stream body goes out aws-chunked with a CRC32 trailer) and no retries, so each
 * refusal is seen as the server gave it.
 */
export function s3Client(
  url: string,
  credentials: Pick<S3Credentials, 'AccessKeyId' | 'SecretAccessKey' | 'SessionToken'>,
  config: Partial<S3ClientConfig> = {},
): S3Client {
  return new S3Client({
    endpoint: `${url}/s3`,
    forcePathStyle: true,
    region: 'auto',
    credentials: {
      accessKeyId: credentials.AccessKeyId,
      secretAccessKey: credentials.SecretAccessKey,
      sessionToken: credentials.SessionToken,
    },
    maxAttempts: 1,
    ...config,
  })
}

type Middleware = Parameters<S3Client['middlewareStack']['addRelativeTo']>[0]
type Handler = (args: { request: unknown }) => Promise<unknown>

/**
 * Runs `touch` on the headers of every request `s3` sends, once the SDK has signed it: to read
 * what went out, or to alter a signed request.
 */
export function afterSigning(
  s3: S3Client,
  name: string,
  touch: (headers: Record<string, string>) => void,
): void {
  const middleware = (next: Handler) => async (args: { request: unknown }) => {
    touch((args.request as { headers: Record<string, string> }).headers)
    return next(args)
  }
  s3.middlewareStack.addRelativeTo(middleware as unknown as Middleware, {
    relation: 'after',
    toMiddleware: 'httpSigningMiddleware',
    name,
  })
}

/** `"<status> <S3 error code>"` of a refused call, or `succeeded`. */
export async function s3ErrorOf(call: Promise<unknown>): Promise<string> {
  try {
    await call
  } catch (error) {
    if (error instanceof S3ServiceException) {
      return `${error.$metadata.httpStatusCode} ${error.name}`
    }
    throw error
  }
  return 'succeeded'
}

/** A Terraform state of `serial`, with `outputs`, as `terraform state push` would send it. */
export function tfState(
  serial: number,
  lineage: string,
  outputs: Record<string, string> = {},
): string {
  const values = Object.fromEntries(
    Object.entries(outputs).map(([name, value]) => [name, { value, type: 'string' }]),
  )
  return `${JSON.stringify(
    {
      version: 4,
      terraform_version: '1.11.4',
      serial,
      lineage,
      outputs: values,
      resources: [],
      check_results: null,
    },
    null,
    2,
  )}\n`
}
