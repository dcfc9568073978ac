import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { CLIError } from '../cli-error'

/** `~/.config/cairn` (or `$XDG_CONFIG_HOME/cairn`): where the CLI keeps what it remembers. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CONFIG_HOME'] ?? join(env['HOME'] ?? homedir(), '.config')
  return join(base, 'cairn')
}

/** Reads a JSON file, or undefined when it does not exist. */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new CLIError(`${path} is not JSON: fix or remove it`)
  }
}

/**
 * Writes a JSON file readable by its owner only (0600, in a 0700 folder): a temporary file
 * renamed into place, so a reader never sees half of it.
 */
export async function writePrivateJson(path: string, value: unknown): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.tmp`
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
  await rename(temporary, path)
}
