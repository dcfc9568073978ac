import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AuthService, Identity } from '@cairn/auth'
import type { Logger } from '../log/logger'

/** Who the local-mode admin token speaks for. */
export const LOCAL_ADMIN: Identity = Object.freeze({
  subject: 'local-admin',
  groups: [],
  roles: ['admin'],
})

const FILE = 'admin.token'
const NAME = 'local admin'

/**
 * Local mode (DESIGN section 8): with no OpenID provider and authentication on, the first start
 * creates an admin API token, prints it once and keeps it in `<data-dir>/admin.token` (mode 0600,
 * the token and a newline). Later starts find the file and only make sure the store still knows
 * the token (a memory store forgets it at every stop).
 */
export async function ensureLocalAdmin(options: {
  auth: AuthService
  dataDir: string
  log: Logger
  print: (text: string) => void
}): Promise<void> {
  const path = join(options.dataDir, FILE)
  const existing = await readFile(path, 'utf8').then(
    (text) => text.trim(),
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    },
  )
  if (existing !== undefined) {
    await options.auth.apiTokens.ensure(existing, LOCAL_ADMIN, NAME)
    options.log.info('local mode: the admin token is the one in the data directory', { path })
    return
  }
  const created = await options.auth.createApiToken(LOCAL_ADMIN, NAME)
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 })
  await writeFile(path, `${created.token}\n`, { mode: 0o600, flag: 'wx' })
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
