import { execFile } from 'node:child_process'
import { chown, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { BenchError } from '../../harness/bench-error'
import { track } from '../../harness/cleanup'
import { testkitModule } from '../../harness/testkit'

const run = promisify(execFile)

/** A PostgreSQL server of the bench's own, for Terraform's `pg` backend. */
export interface RunningPostgres {
  /** Terraform's `conn_str`. */
  readonly connection: string
  stop(): Promise<void>
}

/** The uid and gid of the `postgres` account, when the bench runs as root. */
async function postgresAccount(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined
  const passwd = await readFile('/etc/passwd', 'utf8')
  const fields = passwd
    .split('\n')
    .find((line) => line.startsWith('postgres:'))
    ?.split(':')
  if (fields === undefined) {
    throw new BenchError('running as root, and there is no postgres account to run PostgreSQL as')
  }
  return { uid: Number(fields[2]), gid: Number(fields[3]) }
}

/**
 * Starts PostgreSQL (`initdb`, `pg_ctl` from PATH) on a fresh cluster in `dir`, listening on
 * 127.0.0.1 with trust authentication, registered with the bench's cleanup. As root, it runs as
 * the `postgres` account (`runuser`), as PostgreSQL requires.
 */
export async function startPostgres(dir: string): Promise<RunningPostgres> {
  const account = await postgresAccount()
  const data = join(dir, 'data')
  await mkdir(data, { mode: 0o700 })
  if (account !== undefined) {
    await chown(dir, account.uid, account.gid)
    await chown(data, account.uid, account.gid)
  }
  const as = (command: string, args: string[]) =>
    account === undefined
      ? run(command, args)
      : run('runuser', ['-u', 'postgres', '--', command, ...args])
  try {
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync'])
  } catch (error) {
    throw new BenchError(`initdb failed (is PostgreSQL installed?): ${String(error)}`)
  }
  const { freePort } = await testkitModule<{ freePort: () => Promise<number> }>('free-port')
  const port = await freePort()
  const settings = `-p ${String(port)} -k ${dir} -c listen_addresses=127.0.0.1`
  await as('pg_ctl', ['-D', data, '-o', settings, '-l', join(dir, 'log'), '-w', 'start'])
  const pid = Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0])
  const stop = async () => {
    forget()
    await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => undefined)
  }
  const forget = track({
    stop,
    kill: () => {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    },
  })
  return {
    connection: `postgres://postgres@127.0.0.1:${String(port)}/postgres?sslmode=disable`,
    stop,
  }
}
