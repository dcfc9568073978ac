import type { Page } from 'playwright-core'

/** One `securitypolicyviolation` event of a page, as the page's document reported it. */
export interface CspViolation {
  /** The directive that blocked the load, as enforced: `script-src-elem` for an inline script. */
  readonly effectiveDirective: string
  /** What was blocked: a URL, or `inline` or `eval`. */
  readonly blockedURI: string
  /** The page whose policy was violated. */
  readonly documentURI: string
  /** `enforce`, or `report` under Content-Security-Policy-Report-Only. */
  readonly disposition: string
  /** Where the blocked code was, when Chromium knows: `url:line:column`, or empty. */
  readonly source: string
}

/** What a page reported since `watchPage` began to watch it. */
export interface PageWatch {
  /**
   * Console messages of type error or warning, then uncaught exceptions (`pageerror`), as text in
   * the order they came. Chromium also logs each CSP violation here as an error that names the
   * Content Security Policy, so an empty list means no error, no warning and no violation.
   */
  errors(): string[]
  /** The page's CSP violations, from its `securitypolicyviolation` events. */
  violations(): CspViolation[]
  /**
   * Waits until everything the page has done so far has reached `errors()` and `violations()`:
   * Chromium queues a violation event as a task, and the page's reports reach this process after
   * the page has loaded. Call it before asserting, and after a navigation or an action.
   */
  settle(): Promise<void>
}

/** The name of the function the init script calls; exposed on each watched page. */
const BINDING = '__cairnReportCspViolation'

/**
 * Watches a page for what a user would see in the console: errors, warnings, uncaught exceptions
 * and Content Security Policy violations, so a test can assert a page is clean. Call it before the
 * page's first navigation (the violation listener is installed in each new document), once per
 * page.
 */
export async function watchPage(page: Page): Promise<PageWatch> {
  const errors: string[] = []
  const violations: CspViolation[] = []

  page.on('console', (message) => {
    const type = message.type()
    if (type === 'error' || type === 'warning') errors.push(`console ${type}: ${message.text()}`)
  })
  page.on('pageerror', (error) => {
    errors.push(`uncaught: ${error.stack ?? error.message}`)
  })

  // The binding and the init script come through the DevTools protocol, so a page's own CSP,
  // however strict, does not block them.
  await page.exposeBinding(BINDING, (_source, violation: CspViolation) => {
    violations.push(violation)
  })
  await page.addInitScript((binding: string) => {
    // This runs in the page, and the package is typed for Node without the DOM's types: the few
    // fields it reads are declared here.
    interface ViolationEvent {
      effectiveDirective: string
      blockedURI: string
      documentURI: string
      disposition: string
      sourceFile: string
      lineNumber: number
      columnNumber: number
    }
    const scope = globalThis as unknown as Record<
      string,
      ((violation: CspViolation) => void) | undefined
    > & {
      document: {
        addEventListener(
          type: 'securitypolicyviolation',
          listener: (event: ViolationEvent) => void,
        ): void
      }
    }
    const report = scope[binding]
    scope.document.addEventListener('securitypolicyviolation', (event) => {
      report?.({
        effectiveDirective: event.effectiveDirective,
        blockedURI: event.blockedURI,
        documentURI: event.documentURI,
        disposition: event.disposition,
        source:
          event.sourceFile === ''
            ? ''
            : `${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`,
      })
    })
  }, BINDING)

  return {
    errors: () => [...errors],
    violations: () => [...violations],
    settle: async () => {
      // A task queued after the page's own: once it ran, the violation events queued before it
      // have fired, and their reports travelled the protocol connection ahead of this answer.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)))
    },
  }
}
