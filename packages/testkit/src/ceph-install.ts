import { execFile } from 'node:child_process'
import { open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { isRunning } from './is-running'

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

const INSTALL_COMMAND = `DEBIAN_FRONTEND=noninteractive apt-get install -y ${CEPH_PACKAGES.join(' ')}`

/** One install per machine at a time: suites in other workers wait on this file. */
const LOCK_FILE = join(tmpdir(), 'cairn-ceph-install.lock')
const INSTALL_TIMEOUT_MS = 10 * 60_000

let installing: Promise<void> | undefined

/**
 * Makes sure Ceph's RGW and its daemons are installed, installing them with apt-get when they are
 * missing (as root only). Several suites may ask at once, in this process or in other workers: the
 * first takes a lock file in the OS temp directory and installs, the others wait for it to go and
 * look again. Throws naming the packages and the command when it cannot install them.
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
  const deadline = Date.now() + INSTALL_TIMEOUT_MS
  for (;;) {
    const missing = await missingPrograms()
    if (missing.length === 0) return
    if (process.getuid?.() !== 0) {
      throw new Error(
        `Ceph RGW is not installed (missing ${missing.join(', ')}): install it as root with \`${INSTALL_COMMAND}\``,
      )
    }
    const lock = await takeLock()
    if (lock) {
      try {
        if ((await missingPrograms()).length > 0) await aptInstall()
      } finally {
        await rm(LOCK_FILE, { force: true })
      }
    } else if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for another install of Ceph RGW (${LOCK_FILE}); install it with \`${INSTALL_COMMAND}\``,
      )
    } else {
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
  }
}

/** Takes the install lock, or says it is held by a live process; a dead holder's lock is dropped. */
async function takeLock(): Promise<boolean> {
  try {
    const handle = await open(LOCK_FILE, 'wx')
    await handle.writeFile(String(process.pid))
    await handle.close()
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const holder = Number.parseInt(await readFile(LOCK_FILE, 'utf8').catch(() => ''), 10)
  // An empty file is a holder between creating and writing it: wait for it like a live one.
  if (Number.isInteger(holder) && !isRunning(holder)) await rm(LOCK_FILE, { force: true })
  return false
}

async function aptInstall(): Promise<void> {
  const apt = (...args: string[]) =>
    run('env', ['DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], {
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    })
  try {
    await apt('install', '-y', ...CEPH_PACKAGES)
  } catch {
    // A fresh machine may have no package lists yet: fetch them and try once more.
    try {
      await apt('update')
      await apt('install', '-y', ...CEPH_PACKAGES)
    } catch (error) {
      const { stderr } = error as { stderr?: string }
      throw new Error(
        `could not install Ceph RGW; install it with \`${INSTALL_COMMAND}\`:\n${stderr ?? String(error)}`,
        { cause: error },
      )
    }
  }
}
