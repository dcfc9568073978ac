import { beforeAnswer, fromStoredPrincipal, parseUnitId } from '@cairn/core'
import { Hono, type Context } from 'hono'
import { noteAudit } from '../audit'
import { notFound, TfeError } from '../jsonapi/errors'
import type { TfeDeps, TfeEnv } from '../tfe-env'
import type { PendingVersion, PendingVersions } from './pending-versions'
import { demandSigned, type UploadKind, type UploadUrls } from '../signing/signed-urls'

/**
 * The two uploads of a pending state version, to the signed URLs its creation handed out: the
 * state, which is the write, and its JSON form, which is read and not kept. They carry no
 * Authorization header: the signed URL speaks for the principal that announced the version.
 */
export function uploadRoutes(
  deps: TfeDeps,
  pending: PendingVersions,
  urls: UploadUrls,
): Hono<TfeEnv> {
  const { core } = deps
  const routes = new Hono<TfeEnv>()

  /** The pending version of a signed upload URL. @throws TfeError 403 for a bad or old URL */
  const check = async (
    c: Context<TfeEnv>,
    kind: UploadKind,
  ): Promise<{ record: PendingVersion; etag: string }> => {
    const id = c.req.param('id') ?? ''
    const verdict = urls.verify(
      id,
      kind,
      c.req.param('expires') ?? '',
      c.req.param('signature') ?? '',
      deps.clock.now(),
    )
    demandSigned(verdict, 'upload')
    const found = await pending.get(id)
    if (found === undefined) throw notFound(`no state version ${id}`)
    return found
  }

  routes.put('/state-versions/:id/upload/:expires/:signature', async (c) => {
    const { record, etag } = await check(c, 'upload')
    const unit = parseUnitId(record.unit)
    // The signed URL speaks for the principal that announced the version.
    const principal = fromStoredPrincipal(record.principal)
    c.set('principal', principal)
    noteAudit(c, { unit })
    if (record.version !== null)
      throw new TfeError(409, 'conflict', 'the state of this state version is already uploaded')
    const length = c.req.header('content-length')
    const version = await core.states.write(principal, unit, deps.requestBody(c), {
      source: 'cloud',
      asHolder: true,
      force: record.force,
      expectedMd5: record.md5,
      expected: { serial: record.serial, lineage: record.lineage },
      holderOverridesSerial: true,
      ...(length === undefined || !/^\d+$/.test(length) ? {} : { sizeHint: Number(length) }),
    })
    noteAudit(c, { version: version.timestamp })
    // Durable before the answer, as the write is, but written while the request's audit record is.
    await beforeAnswer(pending.finish(record, etag, version.timestamp).then(() => undefined))
    c.var.log.info('state version uploaded', {
      unit,
      serial: version.serial,
      state_version: record.id,
    })
    return c.body(null, 200)
  })

  routes.put('/state-versions/:id/json-upload/:expires/:signature', async (c) => {
    await check(c, 'json-upload')
    // The JSON form of the state is not kept: outputs are read from the state itself. It is
    // read to its end (within the size limit) so the client sees its upload succeed.
    let size = 0
    for await (const chunk of deps.requestBody(c)) {
      size += chunk.byteLength
      if (size > deps.maxStateBytes)
        throw new TfeError(413, 'payload too large', 'the JSON state is too large')
    }
    return c.body(null, 200)
  })

  return routes
}
