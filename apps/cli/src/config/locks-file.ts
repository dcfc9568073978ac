import { join } from 'node:path'
import * as v from 'valibot'
import { configDir, readJsonFile, writePrivateJson } from './files'

const LocksSchema = v.record(v.string(), v.record(v.string(), v.string()))

/**
 * `~/.config/cairn/locks.json`: the lock IDs `cairn unit lock` took, by server and unit, so that
 * `push` and `unlock` need no ID (DESIGN section 12).
 */
export class LocksFile {
  readonly path: string

  constructor(env: NodeJS.ProcessEnv = process.env) {
    this.path = join(configDir(env), 'locks.json')
  }

  async get(server: string, unit: string): Promise<string | undefined> {
    return (await this.#all())[server]?.[unit]
  }

  async set(server: string, unit: string, lockId: string): Promise<void> {
    const all = await this.#all()
    all[server] = { ...all[server], [unit]: lockId }
    await writePrivateJson(this.path, all)
  }

  async remove(server: string, unit: string): Promise<void> {
    const all = await this.#all()
    const mine = all[server]
    if (mine?.[unit] === undefined) return
    const left = Object.fromEntries(Object.entries(mine).filter(([id]) => id !== unit))
    const rest = Object.fromEntries(Object.entries(all).filter(([url]) => url !== server))
    await writePrivateJson(
      this.path,
      Object.keys(left).length === 0 ? rest : { ...rest, [server]: left },
    )
  }

  async #all(): Promise<Record<string, Record<string, string>>> {
    const parsed = v.safeParse(LocksSchema, (await readJsonFile(this.path)) ?? {})
    return parsed.success ? parsed.output : {}
  }
}
