import type { Child } from 'hono/jsx'
import { CsrfField, Page, type Section, type Viewer } from './layout'

/**
 * The page that asks before something that destroys or blocks: what it is, what will happen, and
 * one form that does it (with the CSRF field and the values it needs), beside a way back.
 */
export function ConfirmPage(props: {
  title: string
  heading: string
  section: Section
  viewer: Viewer
  /** Where the form posts. */
  action: string
  /** The form's hidden fields. */
  fields: Record<string, string>
  /** The button that does it. */
  button: string
  /** Where Cancel leads. */
  back: string
  /** `danger` for what destroys or blocks (the default); a plain button otherwise. */
  danger?: boolean
  children?: Child
}) {
  return (
    <Page title={props.title} section={props.section} viewer={props.viewer}>
      <h1>{props.heading}</h1>
      {props.children}
      <form method="post" action={props.action}>
        <CsrfField csrf={props.viewer.csrf} />
        {Object.entries(props.fields).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <p>
          <button class={props.danger === false ? undefined : 'danger'} type="submit">
            {props.button}
          </button>{' '}
          <a class="button secondary" href={props.back}>
            Cancel
          </a>
        </p>
      </form>
    </Page>
  )
}
