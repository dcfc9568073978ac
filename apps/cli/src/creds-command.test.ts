import { CairnApiError } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, describe, expect, it } from 'vitest'
import type { CLIError } from './cli-error'
import { cairn, routeTo, run, useCliHome } from './testing/in-process-cli'

/**
 * `cairn creds` as AWS's `credential_process` runs it, in process, against the server app in
 * local mode (its admin token to log in with) or with authentication disabled.
 */

useCliHome('cairn-creds-command-')
let server: InProcessApp | undefined
let sent: string[] = []

afterEach(async () => {
  await server?.close()
  server = undefined
  sent = []
})

async function serve(auth: 'local' | 'disabled'): Promise<InProcessApp> {
  server = await inProcessApp({ auth })
  routeTo(server, sent)
  return server
}

interface ProcessCredentials {
  Version: number
  AccessKeyId: string
  SecretAccessKey: string
  SessionToken: string
  Expiration: string
}

describe('cairn creds', () => {
  it('prints process credentials as one line of JSON and nothing else with --json', async () => {
    const app = await serve('local')
    await cairn('login', '--token', app.adminToken as string)
    const result = await run('creds', '--json')
    expect(result.error).toBeUndefined()
    expect(result.stdout.endsWith('\n')).toBe(true)
    expect(result.stdout.trimEnd().split('\n')).toHaveLength(1)
    const creds = JSON.parse(result.stdout) as ProcessCredentials
    expect(creds).toEqual({
      Version: 1,
      AccessKeyId: expect.stringMatching(/^CSK[A-Z2-7]{17}$/) as string,
      SecretAccessKey: expect.any(String) as string,
      SessionToken: expect.any(String) as string,
      Expiration: expect.any(String) as string,
    })
    expect(Date.parse(creds.Expiration)).toBeGreaterThan(Date.now())
    const verified = await app.auth.s3.verify(creds.SessionToken, creds.AccessKeyId)
    expect(verified.secretAccessKey).toBe(creds.SecretAccessKey)
  })

  it('prints shell exports on stdout and the expiry on stderr without --json', async () => {
    const app = await serve('local')
    await cairn('login', '--token', app.adminToken as string)
    const result = await run('creds')
    expect(result.error).toBeUndefined()
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines).toEqual([
      expect.stringMatching(/^export AWS_ACCESS_KEY_ID=CSK[A-Z2-7]{17}$/),
      expect.stringMatching(/^export AWS_SECRET_ACCESS_KEY=[A-Za-z0-9_-]{43}$/),
      expect.stringMatching(/^export AWS_SESSION_TOKEN=[A-Za-z0-9_.-]+$/),
    ])
    expect(result.stderr).toMatch(/^# expires \d{4}-\d\d-\d\dT[\d:.]+Z\n$/)
  })

  it('fails with exit code 1 and says to log in when there is no login, printing nothing', async () => {
    await serve('local')
    const result = await run('creds', '--json')
    expect(result.stdout).toBe('')
    expect((result.error as CLIError).exitCode).toBe(1)
    expect(result.error?.message).toBe(
      'not logged in to http://localhost:8080: run cairn login --server http://localhost:8080 first',
    )
  })

  it('relays that a server with authentication disabled needs no credentials', async () => {
    await serve('disabled')
    const result = await run('creds', '--json')
    expect(result.stdout).toBe('')
    expect(result.error).toBeInstanceOf(CairnApiError)
    expect(result.error).toMatchObject({ code: 'invalid_request' })
    expect(result.error?.message).toMatch(/authentication is disabled/)
  })
})
