import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { readdir, readFile, stat } from 'node:fs/promises'
import { basename, join, relative, resolve, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import { headerOf } from '../state-header'
import { SourceError, type MigrationSource, type SourceUnit, type SourceVersion } from '../source'

/** Folders a walk never enters: Terraform's own working data, and what is not configuration. */
const SKIPPED = new Set(['.terraform', '.git', 'node_modules'])
const CURRENT = 'terraform.tfstate'
/** `terraform.tfstate.backup`, and the `terraform.tfstate.<seconds>.backup` of `state` commands. */
const BACKUP = /^terraform\.tfstate(\.\d+)?\.backup$/
const WORKSPACES = 'terraform.tfstate.d'

/**
 * States in a directory tree, as Terraform's local backend leaves them: each folder with a
 * `terraform.tfstate` (or its backups) is a unit named by its path under the root (the root by its
 * own name), and each workspace under `terraform.tfstate.d/<workspace>/` is `<that>/<workspace>`.
 * A unit's versions are its backups, oldest first by their time, then the state itself; a file
 * whose bytes another already has counts once. A version's identity is its file with its SHA-256,
 * so a file that changed is new history on a second run.
 */
export class DirectorySource implements MigrationSource {
  readonly description: string
  readonly locks = false
  readonly #root: string

  constructor(root: string) {
    this.#root = resolve(root)
    this.description = this.#root
  }

  async *units(): AsyncGenerator<SourceUnit> {
    try {
      if (!(await stat(this.#root)).isDirectory()) {
        throw new SourceError(`${this.#root} is not a directory`)
      }
    } catch (error) {
      if (error instanceof SourceError) throw error
      throw new SourceError(`cannot read ${this.#root}: ${(error as Error).message}`)
    }
    yield* this.#walk(this.#root)
  }

  async *#walk(folder: string): AsyncGenerator<SourceUnit> {
    const entries = (await readdir(folder, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    )
    const files = entries.filter((entry) => entry.isFile()).map((entry) => entry.name)
    const states = files.filter((name) => name === CURRENT || BACKUP.test(name))
    const path = relative(this.#root, folder).split(sep).join('/')
    const name = path === '' ? basename(this.#root) : path
    if (states.length > 0) yield this.#unit(name, folder, states)
    for (const entry of entries) {
      if (!entry.isDirectory() || SKIPPED.has(entry.name)) continue
      if (entry.name === WORKSPACES) {
        const workspaces = await readdir(join(folder, entry.name), { withFileTypes: true })
        for (const workspace of workspaces.filter((each) => each.isDirectory())) {
          const at = join(folder, entry.name, workspace.name)
          const found = (await readdir(at)).filter((file) => file === CURRENT || BACKUP.test(file))
          if (found.length > 0) yield this.#unit(`${name}/${workspace.name}`, at, found)
        }
        continue
      }
      yield* this.#walk(join(folder, entry.name))
    }
  }

  #unit(name: string, folder: string, files: string[]): SourceUnit {
    return {
      name,
      defaultTarget: name,
      versions: async () => {
        const found = await Promise.all(
          files.map(async (file) => {
            const path = join(folder, file)
            const [bytes, info] = await Promise.all([readFile(path), stat(path)])
            const sha256 = createHash('sha256').update(bytes).digest('hex')
            const header = headerOf(bytes.subarray(0, 64 * 1024).toString('utf8'))
            return { file, path, sha256, size: bytes.length, mtime: info.mtimeMs, header }
          }),
        )
        // Backups by their time, the state itself last: it is the current one.
        found.sort((a, b) => {
          if (a.file === CURRENT) return 1
          if (b.file === CURRENT) return -1
          return a.mtime - b.mtime || (a.header.serial ?? 0) - (b.header.serial ?? 0)
        })
        const seen = new Set<string>()
        const versions: SourceVersion[] = []
        for (const each of found) {
          if (seen.has(each.sha256)) continue
          seen.add(each.sha256)
          versions.push({
            id: `${pathToFileURL(each.path).href}#sha256=${each.sha256}`,
            created: new Date(each.mtime).toISOString(),
            author: null,
            size: each.size,
            md5: null,
            serial: each.header.serial,
            open: () => Promise.resolve(createReadStream(each.path)),
          })
        }
        // A state equal to a backup is the newest of them: it stays last, as the current one.
        const current = found.find((each) => each.file === CURRENT)
        if (current !== undefined && versions.at(-1)?.id.endsWith(current.sha256) !== true) {
          const at = versions.findIndex((version) => version.id.endsWith(current.sha256))
          const [moved] = versions.splice(at, 1)
          if (moved !== undefined) versions.push(moved)
        }
        return versions
      },
    }
  }
}
