import { parseUnitId, type UnitId } from '@cairn/core'
import type { Context } from 'hono'
import type { AppEnv } from '../../http/app-env'
import { queryOf } from '../context'

/** The unit named by the `id` query. @throws InvalidUnitIdError when absent or malformed */
export function unitIdOf(c: Context<AppEnv>): UnitId {
  return parseUnitId(queryOf(c, 'id') ?? '')
}
