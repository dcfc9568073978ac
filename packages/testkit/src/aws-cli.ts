import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

const INSTALL_COMMAND = 'DEBIAN_FRONTEND=noninteractive apt-get install -y awscli'
const INSTALL_TIMEOUT_MS = 10 * 60_000

let installing: Promise<string> | undefined

/**
 * The real AWS CLI: the first `aws` on PATH or, when there is none, Debian's `awscli` package
 * installed with apt-get (as root only, as `ensureCeph` installs Ceph). Resolves its path; throws
 * naming the command that installs it when it cannot.
 */
export function awsCliBinary(): Promise<string> {
  installing ??= findOrInstall().catch((error: unknown) => {
    installing = undefined
    throw error
  })
  return installing
}

function onPath(): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue
    const path = join(dir, 'aws')
    try {
      accessSync(path, constants.X_OK)
      return path
    } catch {
      // not this one
    }
  }
  return undefined
}

async function findOrInstall(): Promise<string> {
  const found = onPath()
  if (found !== undefined) return found
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the AWS CLI (aws) is not on PATH: install it as root with \`${INSTALL_COMMAND}\``,
    )
  }
  const apt = (...args: string[]) =>
    run('env', ['DEBIAN_FRONTEND=noninteractive', 'apt-get', ...args], {
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    })
  try {
    await apt('install', '-y', 'awscli')
  } catch {
    // A fresh machine may have no package lists yet: fetch them and try once more.
    try {
      await apt('update')
      await apt('install', '-y', 'awscli')
    } catch (error) {
      const { stderr } = error as { stderr?: string }
      throw new Error(
        `could not install the AWS CLI; install it with \`${INSTALL_COMMAND}\`:\n${stderr ?? String(error)}`,
        { cause: error },
      )
    }
  }
  const installed = onPath() ?? ['/usr/bin/aws'].find((path) => isExecutable(path))
  if (installed === undefined) {
    throw new Error(`apt-get installed awscli but no aws is on PATH; try \`${INSTALL_COMMAND}\``)
  }
  return installed
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}
