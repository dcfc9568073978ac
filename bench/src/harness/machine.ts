import { execFileSync } from 'node:child_process'
import { arch, availableParallelism, cpus, platform, tmpdir, totalmem } from 'node:os'
import { root } from './paths'

/** What a figure depends on besides the code: the machine, Node, and the commit measured. */
export interface MachineFacts {
  readonly node: string
  readonly platform: string
  readonly arch: string
  readonly cpus: number
  readonly cpuModel: string
  readonly memoryGiB: number
  readonly tmpdir: string
  /** The short commit, with `+changes` when the work tree differs from it. */
  readonly commit: string
  readonly shortCommit: string
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: 'pipe' }).trim()
  } catch {
    // Not a git checkout (an unpacked archive): the figures then name no commit.
    return undefined
  }
}

export function machineFacts(): MachineFacts {
  const shortCommit = git(['rev-parse', '--short', 'HEAD']) ?? 'unknown'
  const changed = (git(['status', '--porcelain', '--untracked-files=no']) ?? '') !== ''
  return {
    node: process.version,
    platform: platform(),
    arch: arch(),
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown CPU',
    memoryGiB: Math.round(totalmem() / 1024 ** 3),
    tmpdir: tmpdir(),
    commit: changed ? `${shortCommit}+changes` : shortCommit,
    shortCommit,
  }
}
