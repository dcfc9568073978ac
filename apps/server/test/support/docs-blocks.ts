import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The checkout's root, where the README and `docs/` are. */
const ROOT = fileURLToPath(new URL('../../../..', import.meta.url))

/**
 * A fenced block that follows a `<!-- readme-test: <kind> <names> -->` marker. `kind` is `file`
 * (write the block to `<scenario>/<path>`), `run` (run it in the scenario's shell) or `start` (a
 * server's start command); each name is a scenario, `<scenario>@checkout` or `<scenario>/<path>`.
 */
export interface MarkedBlock {
  page: string
  kind: string
  names: string[]
  body: string
}

const MARKER = /<!-- readme-test: (\w+) ([^>]+?) -->\s*\n\s*```[a-z]*\n([\s\S]*?)```/g

/**
 * The pages whose examples the suites run, in the order they are read: the README first, then
 * every `docs/*.md` in file-name order. A scenario's blocks run in this order, so an example that
 * continues another (the CLI page after the README's quickstart) sits on a later page.
 */
export async function examplePages(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md')).sort()
  return ['README.md', ...docs.map((name) => `docs/${name}`)]
}

/** Every marked block of the README and `docs/*.md`, page by page, in order. */
export async function markedBlocks(): Promise<MarkedBlock[]> {
  const blocks: MarkedBlock[] = []
  for (const page of await examplePages()) {
    const text = await readFile(join(ROOT, page), 'utf8')
    for (const [, kind = '', names = '', body = ''] of text.matchAll(MARKER)) {
      blocks.push({ page, kind, names: names.trim().split(/\s+/), body })
    }
  }
  return blocks
}

/** The scenario a marker's name belongs to: `s3/main.tf`, `resources@checkout`, `rbac`. */
export function scenarioOf(name: string): string {
  return name.split(/[/@]/)[0] ?? ''
}

/** The bodies of the blocks of `kind` marked for `scenario`, README first, then `docs/`. */
export async function docsBlocks(kind: string, scenario: string): Promise<string[]> {
  return (await markedBlocks())
    .filter((block) => block.kind === kind && block.names.includes(scenario))
    .map((block) => block.body)
}

/** The files the README and `docs/` give a scenario (`file <scenario>/<path>` blocks), by path. */
export async function docsFiles(scenario: string): Promise<Map<string, string>> {
  const files = new Map<string, string>()
  for (const block of await markedBlocks()) {
    if (block.kind !== 'file') continue
    for (const name of block.names) {
      if (scenarioOf(name) === scenario) files.set(name.slice(scenario.length + 1), block.body)
    }
  }
  return files
}
