import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types'

export interface S3StoreOptions {
  bucket: string
  /** Keys are stored under this prefix (`cairn/` gives `cairn/units/...`). Default none. */
  prefix?: string
  /** Default `us-east-1`. */
  region?: string
  /** A custom endpoint (`http://127.0.0.1:7480` for RGW or MinIO); default AWS's own. */
  endpoint?: string
  /** Path-style addressing; default true when `endpoint` is given. */
  forcePathStyle?: boolean
  /** Keys or a provider; default the SDK's standard chain (env, profile, SSO, IMDS...). */
  credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider
  /** Attempts per request, the first included, under the SDK's standard retry strategy. Default 4. */
  maxAttempts?: number
  /** How long one request may go without progress before it fails and is retried. Default 30 s. */
  requestTimeoutMs?: number
  /** Size of multipart parts for streamed bodies (at least 5 MiB, S3's minimum). Default 8 MiB. */
  partSize?: number
  /**
   * The server honours `If-None-Match`/`If-Match` on CompleteMultipartUpload (AWS S3 does; Ceph
   * RGW 16 ignores them). When false (the default) a conditional body larger than one part is
   * held in memory and sent in one conditional PUT.
   */
  conditionalMultipart?: boolean
  /**
   * The server honours `If-Match` on DeleteObject (AWS S3 does; Ceph RGW 16 ignores it and
   * deletes). When false (the default) a conditional delete compares the ETag by HEAD first,
   * which is not atomic.
   */
  conditionalDelete?: boolean
}
