import * as v from 'valibot'
import { parseDuration } from './duration'

/** How an error message names a setting: `-port` alone, or with its variable, `-port (PORT)`. */
export interface SettingName {
  readonly flag: string
  readonly label: string
}

/** Reads a setting's text, as given by its flag, its variable or its default, into its value. */
export type SettingSchema<T = unknown> = (name: SettingName) => v.GenericSchema<string, T>

/** Any text, the empty text too. */
export const text: SettingSchema<string> = () => v.string()

/** Any text but the empty one. */
export const nonEmpty: SettingSchema<string> = ({ flag }) =>
  v.pipe(v.string(), v.minLength(1, `${flag} must not be empty`))

/** A whole number from `min` to `max`, written in digits. */
export const wholeNumber =
  (min: number, max: number): SettingSchema<number> =>
  ({ label }) =>
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, `${label} must be a whole number`),
      v.transform(Number),
      v.number(),
      v.minValue(min, `${label} must be at least ${min}`),
      v.maxValue(max, `${label} must be at most ${max}`),
    )

/** A Go duration (`30s`, `15m`, `1h`) in milliseconds, at least `min`. */
export const duration =
  (min = 0): SettingSchema<number> =>
  ({ label }) =>
    goDuration(label, (ms) => (ms >= min ? undefined : `${label} must be at least ${min} ms`))

/** A Go duration in milliseconds, longer than 0. */
export const positiveDuration: SettingSchema<number> = ({ label }) =>
  goDuration(label, (ms) => (ms > 0 ? undefined : `${label} must be longer than 0`))

/** A Go duration in milliseconds, which `refusal` may refuse with a message. */
function goDuration(label: string, refusal: (ms: number) => string | undefined) {
  return v.pipe(
    v.string(),
    v.rawTransform<string, number>(({ dataset, addIssue, NEVER }) => {
      try {
        const ms = parseDuration(dataset.value)
        const message = refusal(ms)
        if (message === undefined) return ms
        addIssue({ message })
      } catch (error) {
        addIssue({ message: `${label}: ${(error as Error).message}` })
      }
      return NEVER
    }),
  )
}

/** `true` or `1`, `false` or `0`. */
export const boolean: SettingSchema<boolean> = ({ label }) =>
  v.pipe(
    v.string(),
    v.picklist(['true', 'false', '1', '0'], `${label} must be true or false`),
    v.transform((given) => given === 'true' || given === '1'),
  )

/** One of `values`; the message lists them in this order. */
export const oneOf =
  <const T extends string>(values: readonly T[]): SettingSchema<T> =>
  ({ label }) =>
    v.picklist(values, `${label} must be ${listed(values)}`)

/** An http or https URL. */
export const httpUrl: SettingSchema<string> = ({ label }) =>
  v.pipe(
    v.string(),
    v.url(`${label} must be an http or https URL`),
    v.regex(/^https?:\/\//i, `${label} must be an http or https URL`),
  )

/** Text that `pattern` matches whole; else `<label> <refusal>`. */
export const matching =
  (pattern: RegExp, refusal: string): SettingSchema<string> =>
  ({ label }) =>
    v.pipe(v.string(), v.regex(pattern, `${label} ${refusal}`))

/** `a`, `a or b`, `a, b or c`. */
export function listed(items: readonly string[]): string {
  const last = items.at(-1) ?? ''
  return items.length < 2 ? last : `${items.slice(0, -1).join(', ')} or ${last}`
}
