import { chromium, type Browser, type LaunchOptions } from 'playwright-core'

import { aptInstall, aptInstallCommand } from './apt-install'
import { findExecutable, isExecutable } from './on-path'

const PACKAGES = ['chromium']

/** Where Debian's `chromium` package puts its launcher. */
const DEBIAN_CHROMIUM = '/usr/bin/chromium'

/**
 * The flags TESTING.md gives for Debian's Chromium: no sandbox (suites may run as root), no GPU,
 * and none of the background traffic (QUIC, component updates, sync) that would reach outside the
 * machine or race a test.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

let installing: Promise<string> | undefined

/**
 * Debian's Chromium: `/usr/bin/chromium`, or the first `chromium` on PATH, or, when there is none,
 * Debian's `chromium` package installed with apt-get (as root only). Resolves the executable's
 * path; throws naming the command that installs it when it cannot.
 */
export function chromiumBinary(): Promise<string> {
  installing ??= findOrInstall().catch((error: unknown) => {
    installing = undefined
    throw error
  })
  return installing
}

function find(): string | undefined {
  return isExecutable(DEBIAN_CHROMIUM) ? DEBIAN_CHROMIUM : findExecutable('chromium')
}

async function findOrInstall(): Promise<string> {
  const found = find()
  if (found !== undefined) return found
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is not installed: install it as root with \`${aptInstallCommand(PACKAGES)}\``,
    )
  }
  await aptInstall(PACKAGES, 'Chromium')
  const installed = find()
  if (installed === undefined) {
    throw new Error(
      `apt-get installed chromium but there is no ${DEBIAN_CHROMIUM}; try \`${aptInstallCommand(PACKAGES)}\``,
    )
  }
  return installed
}

/** What `launchBrowser` passes on to playwright-core; `args` come after the harness's own flags. */
export type LaunchBrowserOptions = Omit<LaunchOptions, 'executablePath' | 'channel'>

/**
 * Starts Debian's Chromium (installing it first when it is missing, see `chromiumBinary`) headless
 * and driven by playwright-core, never a browser playwright downloads. Close it in `afterAll` or
 * `finally`: it is a real process.
 */
export async function launchBrowser(options: LaunchBrowserOptions = {}): Promise<Browser> {
  const executablePath = await chromiumBinary()
  // playwright's own `headless: true` (its default) adds `--headless` as well, which Chromium
  // takes once, and with it hidden scrollbars and muted audio.
  return chromium.launch({
    ...options,
    executablePath,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
  })
}
