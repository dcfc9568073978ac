import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The first executable `program` in a directory of PATH, or else the first executable fallback. */
export function findExecutable(
  program: string,
  fallbacks: readonly string[] = [],
): string | undefined {
  const dirs = (process.env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '')
  return [...dirs.map((dir) => join(dir, program)), ...fallbacks].find(isExecutable)
}

/** Whether `path` is a file this process may run. */
export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK)
    return true
  } catch {
    return false
  }
}
