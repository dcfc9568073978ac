import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

import { aptInstall, aptInstallCommand } from './apt-install'

const run = promisify(execFile)

/** The Debian packages a throwaway RGW cluster needs; they pull in ceph-common and ceph-base. */
export const CEPH_PACKAGES = ['radosgw', 'ceph-mon', 'ceph-osd'] as const

/** What a cluster runs: the three daemons and the tools of ceph-common and ceph-base. */
const CEPH_PROGRAMS = [
  'radosgw',
  'ceph-mon',
  'ceph-osd',
  'ceph',
  'ceph-authtool',
  'monmaptool',
  'radosgw-admin',
]

let installing: Promise<void> | undefined

/**
 * Makes sure Ceph's RGW and its daemons are installed, installing them with apt-get when they are
 * missing (as root only). Several suites may ask at once, in this process or in other workers:
 * `aptInstall` runs one apt-get at a time, and a second install of what is there is a no-op.
 * Throws naming the packages and the command when it cannot install them.
 */
export function ensureCeph(): Promise<void> {
  installing ??= install().catch((error: unknown) => {
    installing = undefined
    throw error
  })
  return installing
}

/** The programs of CEPH_PROGRAMS the shell cannot find on its PATH. */
async function missingPrograms(): Promise<string[]> {
  const { stdout } = await run('sh', [
    '-c',
    'for program; do command -v "$program" >/dev/null || echo "$program"; done',
    'sh',
    ...CEPH_PROGRAMS,
  ])
  return stdout.split('\n').filter((line) => line !== '')
}

async function install(): Promise<void> {
  const missing = await missingPrograms()
  if (missing.length === 0) return
  const command = aptInstallCommand(CEPH_PACKAGES)
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Ceph RGW is not installed (missing ${missing.join(', ')}): install it as root with \`${command}\``,
    )
  }
  await aptInstall(CEPH_PACKAGES, 'Ceph RGW')
  const still = await missingPrograms()
  if (still.length > 0) {
    throw new Error(
      `apt-get installed Ceph RGW but ${still.join(', ')} is still missing; try \`${command}\``,
    )
  }
}
