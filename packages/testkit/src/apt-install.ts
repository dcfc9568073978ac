import { execFile } from 'node:child_process'
import { open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { isRunning } from './is-running'

const run = promisify(execFile)

/**
 * One apt-get at a time for every suite on the machine: dpkg takes its own lock and a second
 * apt-get fails at once instead of waiting, so workers installing Ceph and Chromium together would
 * break each other. The first takes this file; the others wait for it to go.
 */
const LOCK_FILE = join(tmpdir(), 'cairn-apt-install.lock')
const INSTALL_TIMEOUT_MS = 10 * 60_000

/** The command that installs `packages`, for messages that tell a developer what to run. */
export function aptInstallCommand(packages: readonly string[]): string {
  return `DEBIAN_FRONTEND=noninteractive apt-get install -y ${packages.join(' ')}`
}

/**
 * Installs Debian packages with apt-get (the caller checks it runs as root). A fresh machine may
 * have no package lists yet, so a failed install fetches them and tries once more. Waits while
 * another suite installs; throws naming `what` and the command when it cannot install them.
 */
export async function aptInstall(packages: readonly string[], what: string): Promise<void> {
  const command = aptInstallCommand(packages)
  const deadline = Date.now() + INSTALL_TIMEOUT_MS
  while (!(await takeLock())) {
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for another apt-get (${LOCK_FILE}) to install ${what}; install it with \`${command}\``,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  try {
    await installOrUpdateAndRetry(packages)
  } catch (error) {
    const { stderr } = error as { stderr?: string }
    throw new Error(
      `could not install ${what}; install it with \`${command}\`:\n${stderr ?? String(error)}`,
      { cause: error },
    )
  } finally {
    await rm(LOCK_FILE, { force: true })
  }
}

async function installOrUpdateAndRetry(packages: readonly string[]): Promise<void> {
  const apt = (...args: string[]) =>
    run('env', ['DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], {
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    })
  try {
    await apt('install', '-y', ...packages)
  } catch {
    await apt('update')
    await apt('install', '-y', ...packages)
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
