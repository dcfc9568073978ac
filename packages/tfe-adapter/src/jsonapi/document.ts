import type { Context } from 'hono'

/** The media type of every JSON:API document (jsonapi.org, version 1.0). */
export const JSON_API = 'application/vnd.api+json'

export interface Resource {
  id: string
  type: string
  attributes: Record<string, unknown>
  relationships?: Record<string, { data: { id: string; type: string } | null }>
  links?: Record<string, string>
}

/** Answers a JSON:API document. */
export function document(c: Context, body: unknown, status: 200 | 201 = 200): Response {
  return c.body(JSON.stringify(body), status, { 'Content-Type': JSON_API })
}

/** The `meta.pagination` go-tfe reads to walk a list. */
export function pagination(page: number, size: number, total: number): Record<string, unknown> {
  const pages = Math.max(1, Math.ceil(total / size))
  return {
    pagination: {
      'current-page': page,
      'page-size': size,
      'prev-page': page > 1 ? page - 1 : null,
      'next-page': page < pages ? page + 1 : null,
      'total-pages': pages,
      'total-count': total,
    },
  }
}

/** `page[number]` and `page[size]` (TFE's defaults: 1 and 20; sizes up to 100). */
export function pageOf(c: Context): { page: number; size: number } {
  const number = Number(c.req.query('page[number]') ?? '1')
  const size = Number(c.req.query('page[size]') ?? '20')
  return {
    page: Number.isInteger(number) && number >= 1 ? number : 1,
    size: Number.isInteger(size) && size >= 1 ? Math.min(size, 100) : 20,
  }
}

/** Timestamps as go-tfe parses them: `2006-01-02T15:04:05Z`, fractions allowed, never an offset. */
export function timestamp(iso: string): string {
  return new Date(iso).toISOString()
}
