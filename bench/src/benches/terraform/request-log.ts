import { median } from '../../harness/stats'

/** One request of a server's log: `{"msg":"request","method","path","duration_ms"}`. */
interface Logged {
  readonly what: string
  readonly ms: number
}

/**
 * A path with its identifiers folded (`/api/v2/state-versions/sv-8Kq…` to
 * `/api/v2/state-versions/:id`), so the same request of every apply falls in one row.
 */
export function pathPattern(path: string): string {
  return path
    .split('/')
    .map((segment) => (/\d/.test(segment) && segment.length >= 8 ? ':id' : segment))
    .join('/')
}

/** Gathers the request lines of a server's log that it hears. */
export class RequestLog {
  readonly #entries: Logged[] = []

  /** For `startServer`'s `onLine`. */
  readonly hear = (line: string): void => {
    if (!line.includes('"request"')) return
    try {
      const entry = JSON.parse(line) as Record<string, unknown>
      if (entry['msg'] !== 'request') return
      const path = typeof entry['path'] === 'string' ? entry['path'] : ''
      const method = typeof entry['method'] === 'string' ? entry['method'] : ''
      const ms = typeof entry['duration_ms'] === 'number' ? entry['duration_ms'] : 0
      this.#entries.push({ what: `${method} ${pathPattern(path)}`, ms })
    } catch {
      // not a log line of the server's
    }
  }

  /**
   * One row per kind of request, in the order first seen: how many each apply made, and the
   * server's median time for one. `applies` is how many applies the log covers.
   */
  rows(applies: number): { what: string; perApply: number; medianMs: number; totalMs: number }[] {
    const byWhat = new Map<string, number[]>()
    for (const { what, ms } of this.#entries) byWhat.set(what, [...(byWhat.get(what) ?? []), ms])
    return [...byWhat].map(([what, times]) => ({
      what,
      perApply: times.length / applies,
      medianMs: median(times),
      totalMs: times.reduce((sum, ms) => sum + ms, 0) / applies,
    }))
  }
}
