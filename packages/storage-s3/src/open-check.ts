import { HeadBucketCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3'
import { isTransportFailure, S3StoreError, statusOf } from './s3-errors'
import type { S3StoreOptions } from './s3-store-options'

/**
 * Checks at start that the bucket exists and answers to these credentials, so that a typo or a
 * wrong key fails the start with a message naming the bucket and the endpoint, not the first
 * request with a 503.
 */
export async function checkBucket(client: S3Client, options: S3StoreOptions): Promise<void> {
  const { bucket } = options
  const where = `bucket ${bucket} at ${options.endpoint ?? `AWS S3 (${options.region ?? 'us-east-1'})`}`
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }))
    return
  } catch (error) {
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
    throw error
  }
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
