import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { rgwHandle, startRgw, type RgwCluster, type RunningRgw } from './rgw'
import { waitFor } from './wait-for'

/**
 * The variable through which the integration tier's global setup tells its suites where the run's
 * shared cluster is announced: a folder in which a suite asks for the cluster (`wanted`) and the
 * setup answers (`cluster.json`: the cluster, or why it could not start).
 */
export const SHARED_RGW_VARIABLE = 'CAIRN_TEST_SHARED_RGW'

/** Long enough for a first run that installs Ceph with apt-get and starts it. */
const SHARED_START_TIMEOUT_MS = 10 * 60_000

type Announcement = RgwCluster | { error: string }

/**
 * For a vitest global setup: serves one Ceph cluster to every suite of the run that asks for it
 * (`useRgw({ shared: true })`), started when the first asks, so that a run of suites that need none
 * starts none, and stopped when the run ends. Answers the teardown.
 */
export function serveSharedRgw(): () => Promise<void> {
  const folder = mkdtempSync(join(tmpdir(), 'cairn-shared-rgw-'))
  // Set before vitest starts the workers of the tier, which inherit it.
  process.env[SHARED_RGW_VARIABLE] = folder
  let started: Promise<RunningRgw | undefined> | undefined
  const announce = (announcement: Announcement) => {
    const file = join(folder, 'cluster.json')
    writeFileSync(`${file}.new`, JSON.stringify(announcement))
    renameSync(`${file}.new`, file)
  }
  const watch = setInterval(() => {
    if (started !== undefined || !existsSync(join(folder, 'wanted'))) return
    started = startRgw().then(
      (rgw) => {
        const { endpoints, dir, pids, gatewayPids } = rgw
        announce({ endpoints, dir, pids, gatewayPids })
        return rgw
      },
      (error: unknown) => {
        announce({ error: error instanceof Error ? error.message : String(error) })
        return undefined
      },
    )
  }, 50)
  watch.unref()
  return async () => {
    clearInterval(watch)
    await (await started)?.stop()
    rmSync(folder, { recursive: true, force: true })
  }
}

/**
 * The run's shared cluster, once its global setup has started it; undefined when this run has
 * none (vitest run without the integration tier's setup). Its gateways cannot be paused: a suite
 * that pauses them has a cluster of its own.
 */
export async function sharedRgw(): Promise<RunningRgw | undefined> {
  const folder = process.env[SHARED_RGW_VARIABLE]
  if (folder === undefined || !existsSync(folder)) return undefined
  writeFileSync(join(folder, 'wanted'), '')
  const file = join(folder, 'cluster.json')
  await waitFor('the shared Ceph cluster', () => existsSync(file), SHARED_START_TIMEOUT_MS, 100)
  const announcement = JSON.parse(readFileSync(file, 'utf8')) as Announcement
  if ('error' in announcement) {
    throw new Error(`the run's shared Ceph cluster did not start: ${announcement.error}`)
  }
  const refuse = () => {
    throw new Error('the shared Ceph cluster cannot be paused: give the suite its own (useRgw())')
  }
  // The run stops it when it ends; a suite only lets go of it.
  return { ...rgwHandle(announcement, () => Promise.resolve()), pause: refuse, resume: refuse }
}
