import * as v from 'valibot'
import { ConfigError } from './config-error'
import type { SettingSchema } from './setting-schemas'
import { SETTINGS, type Setting } from './settings'

type Settings = typeof SETTINGS

/** A setting's value: what its schema reads, undefined when it has no default and was not given. */
type ValueOf<S> = S extends { schema: SettingSchema<infer T> }
  ? T | (S extends { default: string } ? never : undefined)
  : never

/** Each setting's value, by flag name. */
export type SettingValues = { readonly [K in keyof Settings]: ValueOf<Settings[K]> }

/**
 * Reads every setting: its flag first, then its environment variable (an empty one counts as
 * unset), then its default. The settings are read in the table's order, so the error names the
 * first bad one.
 *
 * @throws ConfigError naming the first bad flag or variable.
 */
export function readSettings(
  flags: Readonly<Record<string, string | undefined>>,
  env: NodeJS.ProcessEnv,
): SettingValues {
  const values: Record<string, unknown> = {}
  for (const [flag, setting] of Object.entries(SETTINGS) as [string, Setting][]) {
    const fromEnv = env[setting.env]
    const given = flags[flag] ?? (fromEnv === '' ? undefined : fromEnv) ?? setting.default
    if (given === undefined) {
      values[flag] = undefined
      continue
    }
    const schema = setting.schema({ flag: `-${flag}`, label: `-${flag} (${setting.env})` })
    const result = v.safeParse(schema, given)
    if (!result.success) throw new ConfigError(result.issues[0].message)
    values[flag] = result.output
  }
  return values as SettingValues
}
