import { LOCAL_ISSUER } from '@cairn/auth'
import type { AuditRecord } from '@cairn/contract'
import { parseUnitId, type Principal } from '@cairn/core'
import { bytesOf, terraformState } from '@cairn/core/testing'
import { afterEach, beforeEach, expect } from 'vitest'
import { inProcessApp, type InProcessApp } from '../../testing/in-process'
import { Browser } from './page-browser'

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

/** A reader of `team/*` and nothing else, as the administrators' pages' tests sign her in. */
export const READER = { subject: 'alice', issuer: LOCAL_ISSUER, groups: [], roles: [] }

/**
 * The dashboard in process for the current test file in local mode with RBAC on: a browser
 * signed in as the administrator (local mode's admin token) and one as `READER`, who holds
 * `reader` on `team/*`. A new app for each test.
 */
export function useSignedInFixture() {
  let fixture: InProcessApp | undefined
  let admin: Browser | undefined
  let reader: Browser | undefined
  beforeEach(async () => {
    fixture = await inProcessApp({ auth: 'local', rbac: { enabled: true } })
    await fixture.rbac.assign(ARRANGER, {
      principal: 'user:alice',
      role: 'reader',
      scope: 'team/*',
    })
    admin = new Browser(fixture)
    await admin.signIn(fixture.adminToken ?? '')
    reader = new Browser(fixture)
    await reader.signIn((await fixture.auth.createApiToken(READER, 'alice laptop')).token)
  })
  afterEach(() => fixture?.close())
  const need = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the fixture runs only inside a test')
    return value
  }
  return {
    get app(): InProcessApp {
      return need(fixture)
    },
    get admin(): Browser {
      return need(admin)
    },
    get reader(): Browser {
      return need(reader)
    },
    /** Writes the next serial of a state to a unit (made if needed), as an apply would. */
    apply: (unit: string, serial: number) =>
      need(fixture).core.states.write(
        ARRANGER,
        parseUnitId(unit),
        bytesOf(terraformState({ serial })),
        { source: 'http', create: true },
      ),
    /** Notes `READER` and the administrator as users seen at a login (a provider's sign-in). */
    seen: async () => {
      await need(fixture).rbac.recordLogin(READER)
      await need(fixture).rbac.recordLogin({ subject: 'local-admin', issuer: LOCAL_ISSUER })
    },
    /** The audit records of an action, newest first, as the API gives them. */
    audit: async (action: string): Promise<AuditRecord[]> =>
      (await need(fixture).audit.query({ action: action as AuditRecord['action'] })).records,
  }
}
