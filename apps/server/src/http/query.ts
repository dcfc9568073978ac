import { InvalidRequestError } from '@cairn/core'
import type { Context } from 'hono'
import type { AppEnv } from './app-env'

/** A `true`/`false` query parameter; absent or empty is false. */
export function queryFlag(c: Context<AppEnv>, name: string): boolean {
  const value = c.req.query(name)
  if (value === undefined || value === '' || value === 'false' || value === '0') return false
  if (value === 'true' || value === '1') return true
  throw new InvalidRequestError(`query parameter ${name} must be true or false`)
}

/** A whole-number query parameter, or undefined when absent. */
export function queryInt(c: Context<AppEnv>, name: string): number | undefined {
  const value = c.req.query(name)
  if (value === undefined || value === '') return undefined
  if (!/^\d{1,9}$/.test(value))
    throw new InvalidRequestError(`query parameter ${name} must be a whole number`)
  return Number(value)
}

/** A text query parameter, or undefined when absent or empty. */
export function queryText(c: Context<AppEnv>, name: string): string | undefined {
  const value = c.req.query(name)
  return value === undefined || value === '' ? undefined : value
}
