import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
/** The README of each folder of `packages/` and `apps/` that has one. */
const packageReadmes = (folder: string) =>
  readdirSync(join(ROOT, folder))
    .map((name) => join(folder, name, 'README.md'))
    .filter((path) => existsSync(join(ROOT, path)))
/** The README, CONTRIBUTING.md, every page of `docs/` (the walk-throughs moved there), and every package's README. */
const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
  ...packageReadmes('packages'),
  ...packageReadmes('apps'),
]

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>()
  let fenced = false
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced
    const heading = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line)
    if (heading?.[1] !== undefined) anchors.add(slug(heading[1]))
  }
  return anchors
}

describe('the documentation', () => {
  it.each(DOCUMENTS)('%s links only to files and headings that exist', (document) => {
    const text = readFileSync(join(ROOT, document), 'utf8').replace(/```[\s\S]*?```/g, '')
    const broken: string[] = []
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (target === undefined || /^[a-z]+:/i.test(target)) continue
      const [path, anchor] = target.split('#') as [string, string | undefined]
      const file = path === '' ? join(ROOT, document) : join(ROOT, dirname(document), path)
      let linked: string
      try {
        linked = readFileSync(file, 'utf8')
      } catch {
        broken.push(`${target} (no file ${relative(ROOT, file)})`)
        continue
      }
      if (anchor !== undefined && !anchorsOf(linked).has(anchor)) {
        broken.push(`${target} (no heading #${anchor})`)
      }
    }
    expect(broken).toEqual([])
  })
})
