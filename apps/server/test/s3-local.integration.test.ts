import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3'
import { readAdminToken, startServer, waitFor, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { call, ROOT, stateOf } from './support/instances'

/** The line `npm run s3:local` prints: Cairn's start command with its variables and flags. */
const START_LINE = /^ {2}((AWS_ACCESS_KEY_ID=\S+) .*npm start -- (.*))$/m

/** The value after `name=` (a variable) or `name ` (a flag) in the printed line. */
function valueIn(line: string, name: string): string {
  const found = new RegExp(`(?:^|\\s)${name}[= ](\\S+)`).exec(line)?.[1]
  expect(found, `${name} in ${line}`).toBeDefined()
  return found as string
}

describe('npm run s3:local, the throwaway S3 server the configuration page offers', () => {
  let child: ChildProcess
  let output = ''
  let exited: Promise<number | null>
  let line: string
  let server: RunningServer | undefined
  const running = () => child.exitCode === null && child.signalCode === null

  beforeAll(async () => {
    // Its own process group, as a terminal runs it: Ctrl-C reaches npm and the script alike.
    child = spawn('npm', ['run', 's3:local'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    exited = new Promise((resolve) => child.once('exit', resolve))
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (output += text))
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (output += text))
    // Long enough for a first run that installs Ceph with apt-get.
    line = await waitFor(
      'the start line of npm run s3:local',
      () => {
        if (!running()) throw new Error(`npm run s3:local exited:\n${output}`)
        return START_LINE.exec(output)?.[1]
      },
      600_000,
    )
  }, 610_000)
  afterAll(async () => {
    await server?.dispose()
    if (running() && child.pid !== undefined) {
      process.kill(-child.pid, 'SIGINT')
      await exited
    }
  })

  it('keeps the units of a Cairn started with the line it prints in its bucket', async () => {
    server = await startServer({
      auth: true,
      shell: { script: line, cwd: ROOT },
      startTimeoutMs: 60_000,
    })
    expect(server.output()).toContain('"storage":"s3"')
    expect((await call(server, null, 'GET', '/readyz')).status).toBe(200)
    const token = await readAdminToken(valueIn(line, '-data-dir'))
    expect((await call(server, token, 'POST', '/v1/units', { id: 'try/s3' })).status).toBe(201)
    const written = await call(server, token, 'POST', '/v1/units/try/s3/upload', stateOf(1, 'try'))
    expect(written.status, written.text).toBe(200)

    // The same bucket through the AWS SDK, with the variables the line gives.
    const s3 = new S3Client({
      endpoint: valueIn(line, '-s3-endpoint'),
      region: valueIn(line, 'AWS_REGION'),
      credentials: {
        accessKeyId: valueIn(line, 'AWS_ACCESS_KEY_ID'),
        secretAccessKey: valueIn(line, 'AWS_SECRET_ACCESS_KEY'),
      },
      forcePathStyle: true,
    })
    try {
      const listed = await s3.send(
        new ListObjectsV2Command({ Bucket: valueIn(line, '-s3-bucket') }),
      )
      expect((listed.Contents ?? []).some((object) => object.Key?.includes('try/s3'))).toBe(true)
    } finally {
      s3.destroy()
    }
  })

  it('stops the S3 server on Ctrl-C, and removes what it made', async () => {
    const endpoint = valueIn(line, '-s3-endpoint')
    const dataDir = valueIn(line, '-data-dir')
    await server?.dispose()
    server = undefined
    process.kill(-(child.pid as number), 'SIGINT')
    await exited
    await waitFor('the script to finish stopping', () =>
      output.includes('the S3 server stopped') ? true : undefined,
    )
    await expect(fetch(endpoint, { signal: AbortSignal.timeout(5_000) })).rejects.toThrow()
    expect(existsSync(dataDir)).toBe(false)
  })
})
