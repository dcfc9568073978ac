import type { SearchPage } from '@cairn/contract'
import type { Context } from 'hono'
import type { AppEnv } from '../http/app-env'
import { noteAudit } from './audit-trail'

/** The longest query term kept in a record; an audit field holds 512 characters. */
const MAX_TERM = 256
const MAX_UNITS = 500

/**
 * What a search's audit record says (on `/v1/search` and the dashboard's search alike): what was
 * asked for, and once answered, how many instances were found and in which units. A search reads
 * what the states of many units hold, so who looked for what is kept as a read of a state is.
 */
export function noteSearch(
  c: Context<AppEnv>,
  query: { q?: string | undefined; type?: string | undefined; unitPrefix?: string | undefined },
  page?: SearchPage,
): void {
  const detail: Record<string, string> = {}
  if (query.q !== undefined) detail['q'] = term(query.q)
  if (query.type !== undefined) detail['type'] = term(query.type)
  if (query.unitPrefix !== undefined) detail['unit_prefix'] = term(query.unitPrefix)
  if (page !== undefined) {
    detail['hits'] = String(page.results.length)
    const units = [...new Set(page.results.map((hit) => hit.unit))].join(', ')
    if (units !== '') {
      detail['units'] = units.length > MAX_UNITS ? `${units.slice(0, MAX_UNITS - 1)}…` : units
    }
  }
  noteAudit(c, { detail })
}

/** A term as a record keeps it: without control characters, cut to `MAX_TERM`. */
function term(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
  return plain.length > MAX_TERM ? `${plain.slice(0, MAX_TERM - 1)}…` : plain
}
