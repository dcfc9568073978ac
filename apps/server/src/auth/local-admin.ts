import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { apiTokenId, LOCAL_ISSUER, type AuthService, type Identity } from '@cairn/auth'
import {
  collectBytes,
  parseStored,
  PreconditionFailedError,
  STORE_KEYS,
  type ObjectStore,
} from '@cairn/core'
import * as v from 'valibot'
import type { Logger } from '../log/logger'

/** Who the local-mode admin token speaks for. */
export const LOCAL_ADMIN: Identity = Object.freeze({
  subject: 'local-admin',
  issuer: LOCAL_ISSUER,
  groups: [],
  roles: ['admin'],
})

const FILE = 'admin.token'

/** Where local mode keeps the admin token in a data directory. */
export function adminTokenPath(dataDir: string): string {
  return join(dataDir, FILE)
}
const NAME = 'local admin'
/**
 * Which token the file holds, kept in the store beside the token records: when the record is
 * gone but this names it, the token was revoked, and stays so.
 */
export const MARKER_KEY = STORE_KEYS.localAdmin

interface LocalAdminOptions {
  auth: AuthService
  store: ObjectStore
  dataDir: string
  log: Logger
  print: (text: string) => void
  /**
   * The store is shared by several instances, each with its own data directory (`-storage s3`):
   * the first instance to start makes the admin token and keeps it in its own data directory;
   * the others find the store's marker and make none.
   */
  shared?: boolean
}

/**
 * Local mode (DESIGN section 8): with no OpenID provider and authentication on, the first start
 * creates an admin API token, prints it once and keeps it in `<data-dir>/admin.token` (mode 0600,
 * the token and a newline). Later starts use that file. Revoking the token sticks: a new one is
 * made only when the file is deleted. A store that knows nothing yet (a memory store, at every
 * start) is given the file's token again.
 */
export async function ensureLocalAdmin(options: LocalAdminOptions): Promise<void> {
  const { auth, log } = options
  const path = adminTokenPath(options.dataDir)
  const existing = await readAdminFile(path)
  if (existing === undefined) {
    if (options.shared === true) await createSharedAdmin(options, path)
    else await createAdmin(options, path)
    return
  }
  const id = apiTokenId(existing)
  const marked = await readMarker(options.store)
  const mark = async () => {
    if (marked !== id) await writeMarker(options.store, id)
  }
  if (await auth.apiTokens.exists(id)) {
    await mark()
    log.info('local mode: the admin token is the one in the data directory', { path })
    return
  }
  if (marked === undefined && (await isEmpty(options.store))) {
    await auth.apiTokens.ensure(existing, LOCAL_ADMIN, NAME)
    await mark()
    log.info('local mode: the admin token is the one in the data directory', { path })
    return
  }
  // Its record is gone from a store that knew it (or, written before the marker existed, knows
  // other things): it was revoked.
  await mark()
  log.warn(
    `local mode: the admin token in ${path} was revoked and stays revoked; delete that file and restart to make a new one`,
    { path, token_id: id },
  )
}

/**
 * With an OpenID provider: says at start whether local mode's admin token still works
 * (`SVC_LOCAL_ADMIN=true`) or, when a data directory still holds one, that it no longer does.
 */
export async function reportLocalAdmin(options: {
  dataDir: string
  accepted: boolean
  log: Logger
}): Promise<void> {
  const path = join(options.dataDir, FILE)
  if (options.accepted) {
    options.log.warn(
      'SVC_LOCAL_ADMIN is on: the admin token of local mode stays a full administrator beside the OpenID provider',
      { path },
    )
    return
  }
  if ((await readAdminFile(path)) !== undefined) {
    options.log.warn(
      'an OpenID provider is configured: the admin token of local mode is refused (set SVC_LOCAL_ADMIN=true to keep it)',
      { path },
    )
  }
}

async function createAdmin(options: LocalAdminOptions, path: string): Promise<void> {
  const created = await options.auth.createApiToken(LOCAL_ADMIN, NAME)
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 })
  await writeFile(path, `${created.token}\n`, { mode: 0o600, flag: 'wx' })
  await writeMarker(options.store, created.id)
  announce(options, path, created)
}

/**
 * On a store shared by several instances: makes the admin token only if no instance ever did.
 * The marker is written create-if-absent, so of instances starting together exactly one wins;
 * a loser revokes the token it made and keeps no file. Revoking the admin token then sticks for
 * every instance; deleting the marker object lets the next start make a new one.
 */
async function createSharedAdmin(options: LocalAdminOptions, path: string): Promise<void> {
  const { auth, log, store } = options
  const made = await readMarker(store)
  if (made === undefined) {
    const created = await auth.createApiToken(LOCAL_ADMIN, NAME)
    try {
      await writeMarker(store, created.id, { ifNoneMatch: '*' })
      await mkdir(options.dataDir, { recursive: true, mode: 0o700 })
      await writeFile(path, `${created.token}\n`, { mode: 0o600, flag: 'wx' })
      announce(options, path, created)
      return
    } catch (error) {
      if (!(error instanceof PreconditionFailedError)) throw error
      await auth.apiTokens.revoke(created.id, LOCAL_ADMIN, true)
    }
  }
  log.info(
    `local mode: another instance sharing this storage made the admin token; it is in that instance's data directory (delete ${MARKER_KEY} under the storage's prefix and restart to make a new one)`,
    { token_id: made ?? (await readMarker(store)) },
  )
}

/** Logs the new admin token's ID and prints the token itself, once. */
function announce(
  options: LocalAdminOptions,
  path: string,
  created: { id: string; token: string },
): void {
  options.log.info('local mode: created the admin token', { path, token_id: created.id })
  options.print(
    [
      '',
      'cairn: local mode (no SVC_AUTH_ISSUER). An admin API token was created; it is shown once here',
      `and kept in ${path}:`,
      '',
      `    ${created.token}`,
      '',
      'Send it as "Authorization: Bearer <token>", or as the password of Terraform\'s http backend.',
      '',
    ].join('\n'),
  )
}

async function readAdminFile(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').then(
    (text) => text.trim(),
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    },
  )
}

const MarkerSchema = v.object({ token_id: v.string() })

/** The ID of the token `admin.token` holds, as the store remembers it. @throws StorageUnavailableError */
async function readMarker(store: ObjectStore): Promise<string | undefined> {
  const object = await store.get(MARKER_KEY)
  if (object === undefined) return undefined
  return parseStored(MarkerSchema, await collectBytes(object.body), MARKER_KEY).token_id
}

async function writeMarker(
  store: ObjectStore,
  id: string,
  condition?: { ifNoneMatch: '*' },
): Promise<void> {
  await store.put(
    MARKER_KEY,
    Buffer.from(`${JSON.stringify({ token_id: id })}\n`),
    condition === undefined ? undefined : { condition },
  )
}

/** Whether the store holds no records at all yet (a memory store, or a new data directory). */
async function isEmpty(store: ObjectStore): Promise<boolean> {
  for (const prefix of ['auth/', STORE_KEYS.units]) {
    if ((await store.list({ prefix, limit: 1 })).objects.length > 0) return false
  }
  return true
}
