import * as v from 'valibot'
import { ConfigError } from './config-error'
import type { SettingName, SettingSchema } from './setting-schemas'
import { SETTINGS, type Variable } from './settings'

/** A setting's value: what its schema reads, undefined when it has no default and was not given. */
type ValueOf<S> = S extends { schema: SettingSchema<infer T> }
  ? T | (S extends { default: string } ? never : undefined)
  : never

/** Each row's value, by the key of its row. */
export type ValuesOf<Table> = { readonly [K in keyof Table]: ValueOf<Table[K]> }

/** Each setting's value, by flag name. */
export type SettingValues = ValuesOf<typeof SETTINGS>

/**
 * Reads every setting: its flag first, then its environment variable (an empty one counts as
 * unset), then its default.
 *
 * @throws ConfigError naming the first bad flag or variable.
 */
export function readSettings(
  flags: Readonly<Record<string, string | undefined>>,
  env: NodeJS.ProcessEnv,
): SettingValues {
  return readTable(
    SETTINGS,
    (flag, setting) => flags[flag] ?? given(env[setting.env]),
    (flag, setting) => ({ flag: `-${flag}`, label: `-${flag} (${setting.env})` }),
  )
}

/**
 * Reads settings of the environment alone, each row keyed by its variable: the variable (an
 * empty one counts as unset), else its default.
 *
 * @throws ConfigError naming the first bad variable.
 */
export function readVariables<Table extends Readonly<Record<string, Variable>>>(
  table: Table,
  env: NodeJS.ProcessEnv,
): ValuesOf<Table> {
  return readTable(
    table,
    (name) => given(env[name]),
    (name) => ({ flag: name, label: name }),
  )
}

/** Reads each row of `table` in order, so the error names the first bad one. */
function readTable<Table extends Readonly<Record<string, Variable>>>(
  table: Table,
  textOf: (key: string, row: Table[keyof Table]) => string | undefined,
  nameOf: (key: string, row: Table[keyof Table]) => SettingName,
): ValuesOf<Table> {
  const values: Record<string, unknown> = {}
  for (const [key, row] of Object.entries(table) as [string, Table[keyof Table]][]) {
    const text = textOf(key, row) ?? row.default
    if (text === undefined) {
      values[key] = undefined
      continue
    }
    const result = v.safeParse(row.schema(nameOf(key, row)), text)
    if (!result.success) throw new ConfigError(result.issues[0].message)
    values[key] = result.output
  }
  return values as ValuesOf<Table>
}

/** A variable's text; an empty one counts as unset. */
function given(text: string | undefined): string | undefined {
  return text === '' ? undefined : text
}
