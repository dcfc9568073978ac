import { randomUUID } from 'node:crypto'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'
import type { _Object } from '@aws-sdk/client-s3'
import { pool } from '../../harness/http'
import type { RunningRgw } from './ceph'

/** The same operations as Cairn's, made directly on the S3 server with the AWS SDK: the baseline. */

export const BUCKET = 'cairn-bench'

export function s3Client(rgw: RunningRgw): S3Client {
  return new S3Client({
    endpoint: rgw.endpoint,
    region: rgw.region,
    credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
    forcePathStyle: true,
    // Otherwise a body goes aws-chunked, which this RGW answers with 411 (as the store sets it).
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
}

/** A lock as Terraform sends one, about the size of Cairn's. */
const lockBody = (name: string) =>
  JSON.stringify({
    ID: '3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    Operation: 'OperationTypeApply',
    Info: '',
    Who: 'bench@s3',
    Version: '1.11.4',
    Created: new Date().toISOString(),
    Path: name,
  })

/** Create-if-absent of a lock object, then its deletion. */
export async function directLock(s3: S3Client, name: string): Promise<void> {
  const Key = `direct/locks/${name}.json`
  await s3.send(
    new PutObjectCommand({ Bucket: BUCKET, Key, Body: lockBody(name), IfNoneMatch: '*' }),
  )
  await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key }))
}

/**
 * The durable record an audited request must add, made directly: the create-if-absent of a new
 * object about the size of one of Cairn's audit records.
 */
export async function directAuditRecord(s3: S3Client): Promise<void> {
  const id = randomUUID()
  await s3.send(
    new PutObjectCommand({
      Bucket: BUCKET,
      Key: `direct/audit/${id}.json`,
      Body: JSON.stringify({ id, action: 'unit.lock', unit: 'ops/lock-seq', pad: 'x'.repeat(400) }),
      IfNoneMatch: '*',
    }),
  )
}

/**
 * The round trips Cairn's design needs before it answers a change on S3, made directly with the
 * same sizes and conditions: the floor of that design on this gateway, which no server work can
 * go under. Each request is checked against what is stored now, by whichever instance serves it:
 *
 * 1. at once, the caller's token record (revoked on any instance, refused on every one) and the
 *    freezes and webhook subscriptions (HEADs of records that do not exist here, as in the bench);
 * 2. the change's own writes (for a state: its bytes and its index side by side; then the
 *    freezes again, since the body streamed, beside the record of the version superseded);
 * 3. the conditional write of the unit record, where the lock and the state change;
 * 4. at once, the audit record, and for a state the notes that tell other instances (the graph's
 *    change log and search's).
 */
export class DirectRoundTrips {
  readonly #tokenKey = 'direct/round-trips/token.json'
  readonly #etags = new Map<string, string>()
  #ready: Promise<unknown> | undefined

  constructor(private readonly s3: S3Client) {}

  /** A lock, then its release, each as Cairn makes one: three round trips apiece. */
  async lock(name: string): Promise<void> {
    for (const held of [true, false]) {
      await this.#checks()
      await this.#record(name, held ? lockBody(name) : '{"lock":null}')
      await directAuditRecord(this.s3)
    }
  }

  /** A small state's write as Cairn makes one: five round trips. */
  async write(name: string, state: string): Promise<void> {
    await this.#checks()
    const id = randomUUID()
    await Promise.all([
      this.#put(`direct/round-trips/${name}/states/${id}.tfstate`, state),
      this.#put(`direct/round-trips/${name}/indexes/${id}.json`, '{"resources":[]}'),
    ])
    await Promise.all([
      this.#head('direct/round-trips/freezes.json'),
      this.#put(`direct/round-trips/${name}/versions/${id}.json`, lockBody(name).repeat(2)),
    ])
    await this.#record(name, lockBody(name).repeat(3))
    await Promise.all([
      directAuditRecord(this.s3),
      this.#put(`direct/round-trips/graph-changes.json`, JSON.stringify({ units: [name] })),
      this.#put(`direct/round-trips/search/${id}.json`, JSON.stringify({ unit: name })),
    ])
  }

  async #checks(): Promise<void> {
    this.#ready ??= this.#put(this.#tokenKey, lockBody('token'))
    await this.#ready
    await Promise.all([
      this.s3
        .send(new GetObjectCommand({ Bucket: BUCKET, Key: this.#tokenKey }))
        .then((answer) => answer.Body?.transformToByteArray()),
      this.#head('direct/round-trips/freezes.json'),
      this.#head('direct/round-trips/hooks.json'),
    ])
  }

  async #record(name: string, body: string): Promise<void> {
    const Key = `direct/round-trips/records/${name}.json`
    const previous = this.#etags.get(Key)
    const written = await this.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key,
        Body: body,
        ...(previous === undefined ? { IfNoneMatch: '*' } : { IfMatch: previous }),
      }),
    )
    this.#etags.set(Key, (written.ETag ?? '').replaceAll('"', ''))
  }

  async #put(Key: string, Body: string): Promise<unknown> {
    return this.s3.send(new PutObjectCommand({ Bucket: BUCKET, Key, Body }))
  }

  /** A HEAD of a key that is absent: the answer is a 404, which is all a check needs. */
  async #head(Key: string): Promise<void> {
    await this.s3.send(new HeadObjectCommand({ Bucket: BUCKET, Key })).catch((error: unknown) => {
      if ((error as { name?: string }).name !== 'NotFound') throw error
    })
  }
}

/** Direct writes: serials per name, and each record's ETag unquoted (this RGW compares that form). */
export class DirectWriter {
  readonly #serials = new Map<string, number>()
  readonly #etags = new Map<string, string>()

  constructor(
    private readonly s3: S3Client,
    private readonly state: (serial: number) => string,
  ) {}

  /**
   * A state's bytes under a new key; with `record`, then the replace-if-unchanged of a small
   * record naming it, which is what makes a write visible atomically (and where a lock is checked).
   */
  async write(name: string, record: boolean): Promise<void> {
    const serial = (this.#serials.get(name) ?? 0) + 1
    this.#serials.set(name, serial)
    const stateKey = `direct/states/${name}/${String(serial).padStart(10, '0')}.tfstate`
    await this.s3.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: stateKey, Body: this.state(serial) }),
    )
    if (!record) return
    const Key = `direct/records/${name}.json`
    const previous = this.#etags.get(Key)
    const written = await this.s3.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key,
        Body: JSON.stringify({ lock: null, current: { object: stateKey, serial } }),
        ...(previous === undefined ? { IfNoneMatch: '*' } : { IfMatch: previous }),
      }),
    )
    this.#etags.set(Key, (written.ETag ?? '').replaceAll('"', ''))
  }
}

/** Every page of ListObjectsV2 under `prefix`, 1,000 a page: the keys (and sizes). */
export async function directList(s3: S3Client, prefix: string): Promise<_Object[]> {
  const objects: _Object[] = []
  let token: string | undefined
  do {
    const page = await s3.send(
      new ListObjectsV2Command({
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 1000,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      }),
    )
    for (const object of page.Contents ?? []) objects.push(object)
    token = page.IsTruncated === true ? page.NextContinuationToken : undefined
  } while (token !== undefined)
  return objects
}

/** The listing, then a GET of every object it names, `clients` at once. */
export async function directListAndGet(
  s3: S3Client,
  prefix: string,
  clients: number,
): Promise<_Object[]> {
  const objects = await directList(s3, prefix)
  await pool(objects.length, clients, async (index) => {
    const answer = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: objects[index]?.Key }))
    await answer.Body?.transformToByteArray()
  })
  return objects
}
