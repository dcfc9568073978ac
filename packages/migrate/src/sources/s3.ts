import {
  GetObjectCommand,
  ListObjectVersionsCommand,
  S3Client,
  type ObjectVersion,
} from '@aws-sdk/client-s3'
import type { Readable } from 'node:stream'
import { SourceError, type MigrationSource, type SourceUnit, type SourceVersion } from '../source'

export interface S3Location {
  bucket: string
  prefix: string
  /** An S3-compatible endpoint (Ceph RGW, MinIO); AWS when absent. Path-style addressing. */
  endpoint?: string
  region?: string
}

/** An S3 client for a location: the standard AWS credential chain, path style off AWS. */
export function s3Client(location: S3Location): S3Client {
  // The SDK warns, over eight lines, that its releases from 2027 need Node 22: this one runs on
  // Node 20. Its own switch silences that one warning, unless the environment says otherwise.
  if ((process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ?? '') === '') {
    process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true'
  }
  return new S3Client({
    // Otherwise a streamed body goes aws-chunked with a trailing checksum, which not every
    // S3-compatible server accepts (Ceph RGW does not); PutObject sends Content-MD5 instead.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    region:
      location.region ??
      process.env['AWS_REGION'] ??
      process.env['AWS_DEFAULT_REGION'] ??
      'us-east-1',
    ...(location.endpoint === undefined
      ? {}
      : { endpoint: location.endpoint, forcePathStyle: true }),
  })
}

/**
 * The unit a key holds, by DESIGN section 11: `<unit>/terraform.tfstate` is `<unit>` (workspaces'
 * `env:/<workspace>/<key>` included), another key ending in `.tfstate` is the unit of that name;
 * other keys (locks, anything else) hold no state.
 */
export function unitOfKey(key: string): string | undefined {
  if (key.endsWith('/terraform.tfstate')) return key.slice(0, -'/terraform.tfstate'.length)
  if (key === 'terraform.tfstate') return undefined
  const last = key.split('/').at(-1) ?? ''
  return last.endsWith('.tfstate') ? key : undefined
}

/**
 * The states of an S3 bucket with versioning (AWS or any S3-compatible store): every key under
 * the prefix that holds a state is a unit, its object versions its history (`ListObjectVersions`,
 * oldest first by `LastModified`), each read with `GetObject(VersionId)`. A plain ETag is the
 * object's MD5, checked against its bytes. A delete marker ends no history: the versions before it
 * are still brought.
 */
export class S3Source implements MigrationSource {
  readonly description: string
  readonly locks = false
  readonly #location: S3Location
  readonly #client: S3Client

  constructor(location: S3Location, client: S3Client = s3Client(location)) {
    this.#location = location
    this.#client = client
    this.description = `s3://${location.bucket}/${location.prefix}`
  }

  async *units(): AsyncGenerator<SourceUnit> {
    const byKey = new Map<string, ObjectVersion[]>()
    let keyMarker: string | undefined
    let versionMarker: string | undefined
    for (;;) {
      let page
      try {
        page = await this.#client.send(
          new ListObjectVersionsCommand({
            Bucket: this.#location.bucket,
            Prefix: this.#location.prefix,
            KeyMarker: keyMarker,
            VersionIdMarker: versionMarker,
          }),
        )
      } catch (error) {
        throw new SourceError(
          `cannot list the versions in ${this.description}: ${describe(error)}`,
          {
            cause: error,
          },
        )
      }
      for (const version of page.Versions ?? []) {
        if (version.Key === undefined || unitOfKey(version.Key) === undefined) continue
        const list = byKey.get(version.Key) ?? []
        list.push(version)
        byKey.set(version.Key, list)
      }
      if (page.IsTruncated !== true) break
      keyMarker = page.NextKeyMarker
      versionMarker = page.NextVersionIdMarker
    }
    for (const key of [...byKey.keys()].sort()) {
      const listed = byKey.get(key) ?? []
      const unit = unitOfKey(key) ?? key
      yield {
        name: key,
        defaultTarget: unit,
        versions: () => Promise.resolve(this.#versions(key, listed)),
      }
    }
  }

  #versions(key: string, listed: ObjectVersion[]): SourceVersion[] {
    // Newest first as listed: reversed, then ordered by time (a stable sort keeps ties listed).
    const ordered = [...listed]
      .reverse()
      .sort((a, b) => (a.LastModified?.getTime() ?? 0) - (b.LastModified?.getTime() ?? 0))
    return ordered.map((version) => {
      const versionId = version.VersionId ?? 'null'
      const etag = (version.ETag ?? '').replaceAll('"', '').toLowerCase()
      return {
        id: `s3://${this.#location.bucket}/${key}?versionId=${encodeURIComponent(versionId)}`,
        created: version.LastModified?.toISOString() ?? null,
        author: version.Owner?.DisplayName ?? version.Owner?.ID ?? null,
        size: version.Size ?? null,
        md5: /^[0-9a-f]{32}$/.test(etag) ? etag : null,
        serial: null,
        open: async () => {
          try {
            const object = await this.#client.send(
              new GetObjectCommand({
                Bucket: this.#location.bucket,
                Key: key,
                VersionId: versionId,
              }),
            )
            return object.Body as Readable
          } catch (error) {
            throw new SourceError(
              `cannot read s3://${this.#location.bucket}/${key} version ${versionId}: ${describe(error)}`,
              { cause: error },
            )
          }
        },
      }
    })
  }
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { Code?: string }).Code ?? error.name
    return code === 'Error' || code === '' ? error.message : `${code}: ${error.message}`
  }
  return String(error)
}
