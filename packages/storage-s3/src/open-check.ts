import { HeadBucketCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import { isTransportFailure, S3StoreError, statusOf } from './s3-errors'
import type { S3StoreOptions } from './s3-store-options'

/**
 * The variables of the AWS SDK's standard credential chain that a person sets by hand, named when
 * the chain finds nothing (AWS SDKs and Tools Reference Guide, "Standardized credential providers").
 */
const CREDENTIAL_VARIABLES =
  'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or AWS_PROFILE, or AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN'

/**
 * Checks at start that the bucket exists and answers to these credentials, so that a typo or a
 * wrong key fails the start with a message naming the bucket and the endpoint, not the first
 * request with a 503. Every failure is an `S3StoreError` of one line: the server prints it and
 * stops, never a stack trace.
 */
export async function checkBucket(client: S3Client, options: S3StoreOptions): Promise<void> {
  const { bucket } = options
  const where = `bucket ${bucket} at ${options.endpoint ?? `AWS S3 (${options.region ?? 'us-east-1'})`}`
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }))
    return
  } catch (error) {
    // The SDK resolves credentials before it sends anything: an empty chain fails here.
    if (isMissingCredentials(error)) {
      throw new S3StoreError(
        'credentials_missing',
        `no AWS credentials for ${where}: set ${CREDENTIAL_VARIABLES}, or run where an instance role provides them${
          options.endpoint === undefined
            ? ' (for an S3-compatible store, also set -s3-endpoint, SVC_S3_ENDPOINT)'
            : ''
        }`,
        { cause: error },
      )
    }
    const status = statusOf(error)
    if (status === undefined && isTransportFailure(error)) {
      const why = error instanceof Error ? error.message : String(error)
      throw new S3StoreError('endpoint_unreachable', `cannot reach ${where}: ${why}`, {
        cause: error,
      })
    }
    if (status === 404) {
      throw new S3StoreError('bucket_not_found', `no ${where}: create it first`, { cause: error })
    }
    if (status === 403) {
      // A HEAD answer has no body to say why; a one-key listing's does.
      const reason = await denialReason(client, bucket)
      throw new S3StoreError(
        'access_denied',
        `access denied to ${where} (${reason}): check the access key, the secret and the bucket policy`,
        { cause: error },
      )
    }
    throw new S3StoreError('check_failed', `cannot use ${where}: ${oneLine(error)}`, {
      cause: error,
    })
  }
}

/** The SDK's `CredentialsProviderError`, thrown when no provider of the chain has credentials. */
function isMissingCredentials(error: unknown): boolean {
  return error instanceof Error && error.name === 'CredentialsProviderError'
}

/** An error on one line: its name, the HTTP status when one came back, and its first line. */
function oneLine(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split('\n')[0] ?? ''
  const status = statusOf(error)
  const first = error.message.split('\n')[0] ?? ''
  const name = error.name === 'Error' || error.name === '' ? '' : `${error.name}: `
  return `${name}${first}${status === undefined ? '' : ` (HTTP ${status})`}`
}

async function denialReason(client: S3Client, bucket: string): Promise<string> {
  try {
    await client.send(new ListObjectsV2Command({ Bucket: bucket, MaxKeys: 1 }))
    return 'AccessDenied'
  } catch (error) {
    const name = error instanceof Error ? error.name : ''
    return name === '' || name === 'Unknown' ? `HTTP ${statusOf(error) ?? 403}` : name
  }
}
