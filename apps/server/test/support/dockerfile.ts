import { readFile } from 'node:fs/promises'
import { ROOT } from './instances'

/** One instruction of a Dockerfile: its keyword (upper case) and its arguments, lines joined. */
export interface Instruction {
  keyword: string
  args: string
}

/** A build stage: its `FROM` line, its name (`AS name`) and its instructions after `FROM`. */
export interface Stage {
  from: string
  name: string | undefined
  instructions: Instruction[]
}

/**
 * The stages of the checkout's Dockerfile, read as Docker reads them: comments dropped, lines
 * continued with a backslash joined, one instruction a line.
 */
export async function dockerfileStages(): Promise<Stage[]> {
  const text = await readFile(`${ROOT}/Dockerfile`, 'utf8')
  const lines = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  const stages: Stage[] = []
  for (const line of lines) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? []
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/)
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] })
      continue
    }
    const stage = stages[stages.length - 1]
    if (stage === undefined) throw new Error(`Dockerfile: ${keyword} before the first FROM`)
    stage.instructions.push({ keyword: keyword.toUpperCase(), args })
  }
  return stages
}

/** The `NAME=value` pairs of a stage's `ENV` instructions. */
export function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {}
  for (const { args } of stage.instructions.filter(({ keyword }) => keyword === 'ENV')) {
    for (const [, name = '', value = ''] of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S*)/g)) {
      env[name] = value
    }
  }
  return env
}

/** The exec form (`["node", "-e", "..."]`) of a `CMD` or `HEALTHCHECK ... CMD` argument. */
export function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['))
  return JSON.parse(json) as string[]
}
