/** Where to go after signing in when nothing, or nothing safe, was asked. */
export const HOME = '/app/units'

/**
 * A page of this dashboard to return to after signing in: a path under `/app/`, never another
 * site (`//evil.example`, `/\evil.example`, a scheme), so the sign-in cannot be used to redirect
 * people elsewhere.
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined) return HOME
  if (!next.startsWith('/app/') || next.includes('\\') || next.startsWith('/app//')) return HOME
  try {
    const url = new URL(next, 'http://dashboard.invalid')
    if (url.host !== 'dashboard.invalid') return HOME
    return `${url.pathname}${url.search}`
  } catch {
    return HOME
  }
}
