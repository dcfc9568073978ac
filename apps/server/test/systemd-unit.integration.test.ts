import { spawnSync } from 'node:child_process'
import type { Dirent } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startServer, useRgw, type RunningServer } from '@cairn/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docsBlocks } from './support/docs-blocks'
import { call, parseEnvFile, ROOT } from './support/instances'

/**
 * `deploy/cairn.service` as docs/deployment.md installs it, on this machine: its commands run as
 * written (as root, in a mount namespace of their own whose /etc, /opt and /var/lib are temporary
 * copies, so the user they add and the files they make stay out of the machine's), then the server
 * starts as systemd would start the unit: as its user, in its directory, with its environment and
 * the settings file read by root. The one change: a free port instead of 8080.
 */

const UNIT = join(ROOT, 'deploy', 'cairn.service')
/** systemd's PATH for services, which `ExecStart=/usr/bin/env node` searches. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** The `[Service]` settings of a unit file, each with every value it was given, in order. */
function serviceSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>()
  let section = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const header = /^\[(.+)\]$/.exec(line)
    if (header !== null) {
      section = header[1] ?? ''
      continue
    }
    const [key, ...value] = line.split('=')
    if (section !== 'Service' || key === undefined) continue
    settings.set(key, [...(settings.get(key) ?? []), value.join('=')])
  }
  return settings
}

/** The one value of a setting. */
function one(settings: Map<string, string[]>, key: string): string {
  const values = settings.get(key) ?? []
  expect(values, `${key}= in deploy/cairn.service`).toHaveLength(1)
  return values[0] as string
}

/** Quotes a word for bash. */
const quoted = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`

describe('the systemd unit, installed as docs/deployment.md says', () => {
  const rgw = useRgw({ shared: true })
  let root: string
  let server: RunningServer | undefined

  /** The checkout's own entries, each bound into /opt/cairn (made in `beforeAll`). */
  let entries: Dirent[] = []

  /**
   * Binds the temporary /etc, /opt (with the checkout as /opt/cairn) and /var/lib in place. The
   * checkout is bound entry by entry into a folder of mode 755: its own folder may be private (a
   * clone into `mktemp -d` is 0700), which the unit's user could not enter, where an installed
   * /opt/cairn is the user's own.
   */
  const mounts = () =>
    [
      'set -euo pipefail',
      `mount --bind ${quoted(join(root, 'etc'))} /etc`,
      `mount --bind ${quoted(join(root, 'opt'))} /opt`,
      ...entries.map(
        (entry) =>
          `mount --bind ${quoted(join(ROOT, entry.name))} ${quoted(join('/opt/cairn', entry.name))}`,
      ),
      `mount --bind ${quoted(join(root, 'var-lib'))} /var/lib`,
    ].join('\n')

  beforeAll(async () => {
    if (process.getuid?.() !== 0) {
      throw new Error(
        'this suite runs the documented commands as root, as the page says: run it as root',
      )
    }
    root = await mkdtemp(join(tmpdir(), 'cairn-systemd-'))
    // The machine's /etc as it is, to add a user to; an empty /opt and /var/lib.
    await mkdir(join(root, 'etc'))
    const copied = spawnSync('cp', ['-a', '/etc/.', join(root, 'etc')], { encoding: 'utf8' })
    expect(copied.status, copied.stderr).toBe(0)
    await mkdir(join(root, 'opt', 'cairn'), { recursive: true })
    await chmod(join(root, 'opt', 'cairn'), 0o755)
    entries = (await readdir(ROOT, { withFileTypes: true })).filter(
      (entry) => entry.isDirectory() || entry.isFile(),
    )
    for (const entry of entries) {
      const target = join(root, 'opt', 'cairn', entry.name)
      if (entry.isDirectory()) await mkdir(target)
      else await writeFile(target, '')
    }
    await mkdir(join(root, 'var-lib'))
  })
  afterAll(async () => {
    await server?.dispose()
    await rm(root, { recursive: true, force: true })
  })

  it('passes systemd-analyze verify', () => {
    const verified = spawnSync('systemd-analyze', ['verify', UNIT], { encoding: 'utf8' })
    if (verified.error !== undefined) {
      throw new Error(
        `systemd-analyze is missing (${verified.error.message}): install it with DEBIAN_FRONTEND=noninteractive apt-get install -y systemd`,
      )
    }
    expect(`${verified.stdout}${verified.stderr}`).toBe('')
    expect(verified.status).toBe(0)
  })

  it("serves as the unit's user with the documented shared signing key and settings", async () => {
    // The page's commands (the user, /etc/cairn), then those for several instances (the key and
    // the settings, made in /etc/cairn), each as written.
    const blocks = [
      ...(await docsBlocks('run', 'systemd')),
      ...(await docsBlocks('run', 'instances')),
    ]
    expect(blocks.length).toBeGreaterThanOrEqual(2)
    const installed = spawnSync(
      'unshare',
      ['--mount', 'bash', '-c', [mounts(), ...blocks].join('\n')],
      {
        cwd: tmpdir(),
        encoding: 'utf8',
      },
    )
    expect(installed.status, `${installed.stdout}${installed.stderr}`).toBe(0)

    const unit = serviceSettings(await readFile(UNIT, 'utf8'))
    const user = one(unit, 'User')
    const group = one(unit, 'Group')
    const stateDirectory = one(unit, 'StateDirectory')
    // systemd reads the settings file as root; the server opens the files they name itself.
    const settingsFile = one(unit, 'EnvironmentFile').replace(/^-/, '')
    expect(settingsFile.startsWith('/etc/')).toBe(true)
    const settings = parseEnvFile(
      await readFile(join(root, 'etc', settingsFile.slice('/etc/'.length)), 'utf8'),
    )
    expect(settings['SVC_TOKENS_PRIVATE_KEY_PEM_PATH']).toBe('/etc/cairn/signing.pem')
    await rgw.createBucket(settings['SVC_S3_BUCKET'])
    const environment: Record<string, string> = { PATH: SYSTEMD_PATH }
    for (const assignment of unit.get('Environment') ?? []) {
      const [name, ...value] = assignment.split('=')
      environment[name as string] = value.join('=')
    }
    Object.assign(environment, settings, {
      // Where this suite's S3 server is (the docs add SVC_S3_ENDPOINT off AWS), and AWS
      // credentials from the standard chain.
      SVC_S3_ENDPOINT: rgw.endpoint,
      AWS_ACCESS_KEY_ID: rgw.accessKeyId,
      AWS_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      AWS_REGION: rgw.region,
      // The one change: free ports on the loopback address.
      PORT: '0',
      SVC_HOST: '127.0.0.1',
      SVC_METRICS_PORT: '0',
      SVC_LOG_LEVEL: 'info',
    })
    // StateDirectory=: systemd makes /var/lib/<name>, owned by the unit's user, mode 0700.
    const state = `/var/lib/${stateDirectory}`
    const start = [
      mounts(),
      `install -d -m ${one(unit, 'StateDirectoryMode')} -o ${user} -g ${group} ${state}`,
      `cd ${quoted(one(unit, 'WorkingDirectory'))}`,
      // As the unit's user and group with its supplementary groups, with only the unit's
      // environment; every step execs the next, so the PID stays node's.
      `exec setpriv --reuid=${user} --regid=${group} --init-groups env -i ${Object.entries(
        environment,
      )
        .map(([name, value]) => quoted(`${name}=${value}`))
        .join(' ')} ${one(unit, 'ExecStart')}`,
    ].join('\n')
    server = await startServer({
      auth: true,
      shell: { script: `exec unshare --mount bash -c ${quoted(start)}`, cwd: tmpdir() },
      startTimeoutMs: 60_000,
    })
    expect(server.output()).toContain('"storage":"s3"')
    const health = await call(server, null, 'GET', '/readyz')
    expect(health.status, health.text).toBe(200)
    // Local mode's admin token, made in the unit's state directory by its user.
    const passwd = await readFile(join(root, 'etc', 'passwd'), 'utf8')
    const uid = new RegExp(`^${user}:[^:]*:(\\d+):`, 'm').exec(passwd)?.[1]
    const token = await stat(join(root, 'var-lib', stateDirectory, 'admin.token'))
    expect({ uid: String(token.uid), mode: token.mode & 0o777 }).toEqual({ uid, mode: 0o600 })
  })
})
