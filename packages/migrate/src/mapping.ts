import { readFile } from 'node:fs/promises'
import * as v from 'valibot'

/**
 * A mapping file: rules from source names to Cairn units, the first that matches wins. `from` is
 * a glob over the source's name (`*` within one `/`-separated segment, `**` across segments);
 * `to` is a template where `{1}`, `{2}`... are what the globs matched, in order, and `{name}` is
 * the whole source name. A name no rule matches keeps its default unit.
 *
 *     { "rules": [ { "from": "acme/prod-*", "to": "prod/{1}" }, { "from": "**", "to": "old/{1}" } ] }
 */
const MappingFileSchema = v.strictObject({
  rules: v.array(
    v.strictObject({
      from: v.pipe(v.string(), v.minLength(1)),
      to: v.pipe(v.string(), v.minLength(1)),
    }),
  ),
})

export interface MappingRule {
  from: string
  to: string
}

export class MappingError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MappingError'
  }
}

/** Unit names from source names. */
export class Mapping {
  readonly #rules: { pattern: RegExp; to: string }[]

  constructor(rules: readonly MappingRule[] = []) {
    this.#rules = rules.map((rule) => {
      for (const [, index] of rule.to.matchAll(/\{(\d+)\}/g)) {
        const wanted = Number(index)
        const globs = (rule.from.match(/\*\*|\*/g) ?? []).length
        if (wanted < 1 || wanted > globs) {
          throw new MappingError(
            `the rule from ${rule.from} names {${wanted}}, but its pattern has ${globs} glob${globs === 1 ? '' : 's'}`,
          )
        }
      }
      return { pattern: globPattern(rule.from), to: rule.to }
    })
  }

  /** Reads a mapping file (JSON). @throws MappingError naming what is wrong */
  static async read(path: string): Promise<Mapping> {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (error) {
      throw new MappingError(`cannot read the mapping file ${path}: ${(error as Error).message}`)
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw new MappingError(`the mapping file ${path} is not JSON`)
    }
    const checked = v.safeParse(MappingFileSchema, parsed)
    if (!checked.success) {
      const issue = checked.issues[0]
      const where = v.getDotPath(issue) ?? 'its top'
      throw new MappingError(`the mapping file ${path} is not valid at ${where}: ${issue.message}`)
    }
    return new Mapping(checked.output.rules)
  }

  /** The unit for a source name: the first matching rule's template, or `fallback`. */
  target(name: string, fallback: string): string {
    for (const rule of this.#rules) {
      const match = rule.pattern.exec(name)
      if (match === null) continue
      return rule.to.replace(/\{(\d+|name)\}/g, (_, key: string) =>
        key === 'name' ? name : (match[Number(key)] ?? ''),
      )
    }
    return fallback
  }
}

function globPattern(glob: string): RegExp {
  let source = ''
  for (let at = 0; at < glob.length; at += 1) {
    const char = glob[at] ?? ''
    if (char === '*' && glob[at + 1] === '*') {
      source += '(.*)'
      at += 1
    } else if (char === '*') {
      source += '([^/]*)'
    } else {
      source += char.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
    }
  }
  return new RegExp(`^${source}$`)
}
