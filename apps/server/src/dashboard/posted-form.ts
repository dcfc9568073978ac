import type { Context } from 'hono'
import type { AppEnv } from '../http/app-env'

/** Each post's form, read once by the CSRF check and handed to its page. */
const formOf = new WeakMap<Request, URLSearchParams>()

/** The form of a post that passed the CSRF check. */
export function postedForm(c: Context<AppEnv>): URLSearchParams {
  const form = formOf.get(c.req.raw)
  if (form === undefined) throw new Error('the form was not read by the CSRF check')
  return form
}

/** Keeps the form of a post that passed the CSRF check, for its page. */
export function keepPostedForm(c: Context<AppEnv>, form: URLSearchParams): void {
  formOf.set(c.req.raw, form)
}
