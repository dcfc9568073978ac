/** Where to go after signing in when nothing, or nothing safe, was asked. */
export const HOME = '/app/units'

/** Where every page of the dashboard lives. */
const DASHBOARD = '/app/'

/**
 * A page of this dashboard to return to after signing in: a path under `/app/`, never another
 * site (`//evil.example`, `/\evil.example`, a scheme), so the sign-in cannot be used to redirect
 * people elsewhere. The answer is checked after the path is resolved, since dot segments move it
 * (`/app/..//evil.example` resolves to `//evil.example`, which a browser reads as another host),
 * and is itself a safe input: checking it again gives it back unchanged.
 */
export function safeNext(next: string | undefined): string {
  if (next === undefined || !isDashboardPath(next)) return HOME
  let url: URL
  try {
    url = new URL(next, 'http://dashboard.invalid')
  } catch {
    return HOME
  }
  const target = `${url.pathname}${url.search}`
  if (url.host !== 'dashboard.invalid' || !isDashboardPath(target)) return HOME
  return target
}

/**
 * Whether a target is a path of the dashboard as a browser would read it: under `/app/`, with no
 * backslash (which browsers read as a slash), no empty segment at its start (`/app//x` is a
 * protocol-relative URL once `..` takes `/app` away) and no control character (which URL parsers
 * drop, joining what it separated).
 */
function isDashboardPath(target: string): boolean {
  return (
    target.startsWith(DASHBOARD) &&
    !target.startsWith(`${DASHBOARD}/`) &&
    !target.includes('\\') &&
    !Array.from(target).some((char) => char < ' ' || char === '\u007f')
  )
}
