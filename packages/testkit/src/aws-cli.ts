import { aptInstall, aptInstallCommand } from './apt-install'
import { findExecutable } from './on-path'

const PACKAGES = ['awscli']

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

async function findOrInstall(): Promise<string> {
  const found = findExecutable('aws')
  if (found !== undefined) return found
  if (process.getuid?.() !== 0) {
    throw new Error(
      `the AWS CLI (aws) is not on PATH: install it as root with \`${aptInstallCommand(PACKAGES)}\``,
    )
  }
  await aptInstall(PACKAGES, 'the AWS CLI')
  const installed = findExecutable('aws', ['/usr/bin/aws'])
  if (installed === undefined) {
    throw new Error(
      `apt-get installed awscli but no aws is on PATH; try \`${aptInstallCommand(PACKAGES)}\``,
    )
  }
  return installed
}
