import { parseUnitId, type Principal } from '@cairn/core'
import { bytesOf, terraformState } from '@cairn/core/testing'
import { afterEach, beforeEach, expect } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'

/** An administrator outside the app, arranging units, states, edges and locks for a test. */
export const ARRANGER: Principal = { subject: 'test-arranger', roles: ['admin'] }

/**
 * The dashboard in process for the current test file, with RBAC on and authentication off: every
 * page is seen by `anonymous`, which holds only what a test grants it. A new app for each test.
 */
export function usePageFixture() {
  let fixture: InProcessApp | undefined
  let serial = 0
  beforeEach(async () => {
    fixture = await inProcessApp({ rbac: { enabled: true } })
    serial = 0
  })
  afterEach(() => fixture?.close())
  const app = () => {
    if (fixture === undefined) throw new Error('the page fixture runs only inside a test')
    return fixture
  }
  return {
    get app(): InProcessApp {
      return app()
    },
    /** Gives `anonymous` a role on a scope. */
    grant: (role: string, scope: string) =>
      app().rbac.assign(ARRANGER, { principal: 'user:anonymous', role, scope }),
    /** Writes a state to a unit (made if needed) as a new version. */
    write: (unit: string, text: string) =>
      app().core.states.write(ARRANGER, parseUnitId(unit), bytesOf(text), {
        source: 'http',
        create: true,
      }),
    /** Writes the next serial of a state with these outputs, as an apply would. */
    apply: async (unit: string, outputs: Record<string, unknown> = {}) => {
      serial += 1
      await app().core.states.write(
        ARRANGER,
        parseUnitId(unit),
        bytesOf(terraformState({ serial, outputs })),
        { source: 'http', create: true },
      )
    },
    /** Declares a unit's dependencies. */
    depend: (unit: string, ...edges: { from: string; output?: string }[]) =>
      app().core.dependencies.set(ARRANGER, parseUnitId(unit), { dependencies: edges }),
    /** A page's HTML, checking its status. */
    page: async (path: string, status = 200): Promise<string> => {
      const response = await app().request(path)
      const text = await response.text()
      expect(response.status, text).toBe(status)
      return text
    },
  }
}
