import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { rmSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3'

import { cephConf } from './ceph-conf'
import { ensureCeph } from './ceph-install'
import { killDaemon, startDaemon, tailOf, type Daemon } from './daemon'
import { freePort } from './free-port'

const run = promisify(execFile)

export interface StartRgwOptions {
  /** How many gateways (beast frontends on their own ports) serve the one cluster. Default 1. */
  gateways?: number
  /** The cap of the in-memory OSD (`memstore device bytes`). Default 1 GiB. */
  memoryBytes?: number
  /** How long each step (monitor, gateway) may take to come up. Default 60 s. */
  startTimeoutMs?: number
  /**
   * Whether the gateways set TCP_NODELAY (beast's `tcp_nodelay=1`). Default true. Without it, as
   * RGW 16 ships, a gateway writes an answer's headers and body in two segments and Nagle's
   * algorithm holds the body until the client acknowledges the headers, which Linux delays by up to
   * 40 ms: every small GET then takes about 45 ms on loopback, where a PUT takes 5.
   */
  noDelay?: boolean
}

/**
 * The `rgw` section of a gateway's performance counters (`perf dump` on its admin socket): counts
 * since the gateway started.
 */
export interface RgwPerfCounters {
  /** Requests the gateway has served, of every kind. */
  readonly req: number
  /** GETs of objects. */
  readonly get: number
  /** PUTs of objects. */
  readonly put: number
  /** The other counters, by Ceph's names: numbers, or `{ avgcount, sum, avgtime }` for latencies. */
  readonly [counter: string]: unknown
}

export interface RunningRgw {
  /** `http://127.0.0.1:<port>` of each gateway, all over the same data. */
  readonly endpoints: string[]
  /** The first gateway's endpoint. */
  readonly endpoint: string
  readonly region: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  /** The cluster's temporary directory: its configuration, data and a log file per daemon. */
  readonly dir: string
  /** The PIDs of its daemons: monitor, OSD and gateways. */
  readonly pids: number[]
  /** The PIDs of its gateways, in the order of `endpoints`. */
  readonly gatewayPids: number[]
  /**
   * Freezes every gateway (SIGSTOP by PID): connections are still accepted by the kernel, but
   * nothing answers, as a store that hangs. Never SIGKILL a gateway of a running test: the OSD
   * keeps its data in RAM, and a restarted gateway is a new start.
   */
  pause(): void
  /** Thaws the gateways `pause` froze (SIGCONT by PID). */
  resume(): void
  /** Makes a bucket (a new unique name unless given one) and returns its name. */
  createBucket(name?: string): Promise<string>
  /**
   * The performance counters of gateway `gatewayIndex` (default 0, the order of `endpoints`),
   * read from its admin socket: compare two readings to count the requests made in between. A
   * paused gateway does not answer.
   */
  perf(gatewayIndex?: number): Promise<RgwPerfCounters>
  /** SIGKILLs every daemon by PID, waits for them to exit and removes the cluster's directory. */
  stop(): Promise<void>
}

const REGION = 'us-east-1'
const ACCESS_KEY_ID = 'CAIRNTESTACCESSKEY01'
const SECRET_ACCESS_KEY = 'cairn-test-secret-access-key-0000000000'

/** Clusters still running, killed when the process exits without stopping them. */
const running = new Set<{ daemons: Daemon[]; dir: string }>()
process.once('exit', () => {
  for (const cluster of running) {
    for (const daemon of cluster.daemons) {
      try {
        process.kill(daemon.pid, 'SIGKILL')
      } catch {
        // Already gone.
      }
    }
    rmSync(cluster.dir, { recursive: true, force: true })
  }
})

/**
 * Starts a throwaway one-node Ceph cluster with RADOS gateways: no auth, a monitor on a free port
 * of 127.0.0.1 (msgr v1), one OSD in RAM, `gateways` beast frontends on free ports and one S3 user,
 * all under a new temporary directory. Installs Ceph first when it is missing (`ensureCeph`).
 * Fails with the tail of the log of the daemon that did not come up.
 */
export async function startRgw(options: StartRgwOptions = {}): Promise<RunningRgw> {
  const { gateways = 1, memoryBytes = 1024 ** 3, startTimeoutMs = 60_000, noDelay = true } = options
  if (!Number.isInteger(gateways) || gateways < 1) {
    throw new Error(`startRgw: gateways must be a positive integer, not ${gateways}`)
  }
  await ensureCeph()

  // A free monitor port rather than Ceph's 6789, so that clusters of suites in parallel workers
  // never meet.
  const [monPort, ...gatewayPorts] = (await distinctFreePorts(gateways + 1)) as [
    number,
    ...number[],
  ]
  const endpoints = gatewayPorts.map((port) => `http://127.0.0.1:${port}`)
  const dir = await mkdtemp(join(tmpdir(), 'cairn-rgw-'))
  const cluster = { daemons: [] as Daemon[], dir }
  const gatewayDaemons: Daemon[] = []
  running.add(cluster)
  const stop = async () => {
    running.delete(cluster)
    await Promise.all(cluster.daemons.map((daemon) => killDaemon(daemon)))
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const conf = join(dir, 'ceph.conf')
    const fsid = randomUUID()
    await Promise.all(['mon', 'osd', 'run'].map((sub) => mkdir(join(dir, sub))))
    await writeFile(conf, cephConf({ dir, fsid, monPort, memoryBytes }))
    const keyring = join(dir, 'keyring')
    const monmap = join(dir, 'monmap')
    await run('ceph-authtool', [
      ...['--create-keyring', keyring, '--gen-key', '-n', 'mon.', '--cap', 'mon', 'allow *'],
    ])
    await run('monmaptool', [
      ...['--create', '--addv', 'a', `[v1:127.0.0.1:${monPort}]`, '--fsid', fsid, monmap],
    ])
    await run('ceph-mon', [
      ...['-c', conf, '--mkfs', '-i', 'a', '--monmap', monmap, '--keyring', keyring],
    ])
    const ceph = (...args: string[]) =>
      run('ceph', ['-c', conf, '--connect-timeout', '10', ...args])
    // A monitor that answers `mon stat` may still refuse commands for a moment after its election
    // ("problem getting command descriptions from mon"), most often on a loaded machine: a command
    // refused that way has not run, so it is tried again for a while.
    const cephSettled = async (...args: string[]) => {
      const deadline = Date.now() + startTimeoutMs
      for (;;) {
        try {
          return await ceph(...args)
        } catch (error) {
          const text = String((error as { stderr?: unknown }).stderr ?? error)
          if (!text.includes('problem getting command descriptions') || Date.now() > deadline) {
            throw error
          }
          await new Promise((done) => setTimeout(done, 500))
        }
      }
    }
    const start = (name: string, file: string, args: string[]) => {
      const daemon = startDaemon(name, file, ['-c', conf, '-f', ...args], join(dir, `${name}.out`))
      cluster.daemons.push(daemon)
      return daemon
    }

    const mon = start('mon.a', 'ceph-mon', ['-i', 'a'])
    await until(`the monitor on port ${monPort}`, [mon], startTimeoutMs, () =>
      ceph('mon', 'stat').then(
        () => true,
        () => false,
      ),
    )
    const { stdout: osdId } = await cephSettled('osd', 'create')
    if (osdId.trim() !== '0') throw new Error(`startRgw: the new OSD got id ${osdId.trim()}, not 0`)
    await cephSettled('osd', 'crush', 'add-bucket', 'node0', 'host')
    await cephSettled('osd', 'crush', 'move', 'node0', 'root=default')
    await run('ceph-osd', ['-c', conf, '-i', '0', '--mkfs'])
    await cephSettled('osd', 'crush', 'add', 'osd.0', '1.0', 'host=node0')
    const osd = start('osd.0', 'ceph-osd', ['-i', '0'])

    // The first gateway makes the pools, realm and zone; the others start once they exist, so
    // that no two race to create them.
    const startGateway = async (port: number, index: number) => {
      const name = `client.rgw.${index}`
      const rgwData = join(dir, `rgw.${index}`)
      await mkdir(rgwData)
      const gateway = start(name, 'radosgw', [
        '-n',
        name,
        // Without tcp_nodelay Ceph 16's beast frontend holds each small answer back ~45 ms.
        `--rgw-frontends=beast endpoint=127.0.0.1:${port}${noDelay ? ' tcp_nodelay=1' : ''}`,
        `--rgw-data=${rgwData}`,
      ])
      gatewayDaemons[index] = gateway
      await until(`gateway ${name} on port ${port}`, [mon, osd, gateway], startTimeoutMs, () =>
        fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) }).then(
          () => true,
          () => false,
        ),
      )
    }
    const [first, ...rest] = gatewayPorts as [number, ...number[]]
    await startGateway(first, 0)
    await Promise.all(rest.map((port, index) => startGateway(port, index + 1)))

    await run('radosgw-admin', [
      ...['-c', conf, 'user', 'create', '--uid=cairn-test', '--display-name=Cairn tests'],
      `--access-key=${ACCESS_KEY_ID}`,
      `--secret-key=${SECRET_ACCESS_KEY}`,
    ])
    // RGW makes the pools of bucket indexes and object data on first use, which takes seconds:
    // pay for it here rather than in a suite's first test.
    await withClient(endpoints[0] as string, async (client) => {
      const warmUp = { Bucket: `cairn-warm-up-${randomUUID().slice(0, 8)}` }
      await client.send(new CreateBucketCommand(warmUp))
      await client.send(new PutObjectCommand({ ...warmUp, Key: 'warm-up', Body: 'warm-up' }))
      await client.send(new DeleteObjectCommand({ ...warmUp, Key: 'warm-up' }))
      await client.send(new DeleteBucketCommand(warmUp))
    })
  } catch (error) {
    await stop()
    throw error
  }

  return rgwHandle(
    {
      endpoints,
      dir,
      pids: cluster.daemons.map((daemon) => daemon.pid),
      gatewayPids: gatewayDaemons.map((gateway) => gateway.pid),
    },
    stop,
  )
}

/** What another process of the run needs to know of a running cluster to use it. */
export interface RgwCluster {
  readonly endpoints: string[]
  readonly dir: string
  readonly pids: number[]
  readonly gatewayPids: number[]
}

/**
 * A handle on a running cluster, started by this process or by another of the same run (the
 * integration tier's shared cluster); `stop` is what stopping it means for the caller.
 */
export function rgwHandle(cluster: RgwCluster, stop: () => Promise<void>): RunningRgw {
  const { endpoints, dir, gatewayPids } = cluster
  const signalGateways = (signal: NodeJS.Signals) => {
    for (const pid of gatewayPids) process.kill(pid, signal)
  }
  let bucketCount = 0
  return {
    endpoints,
    endpoint: endpoints[0] as string,
    region: REGION,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    dir,
    pids: cluster.pids,
    gatewayPids,
    pause: () => {
      signalGateways('SIGSTOP')
    },
    resume: () => {
      signalGateways('SIGCONT')
    },
    createBucket: async (name = `cairn-test-${randomUUID().slice(0, 8)}-${++bucketCount}`) => {
      await withClient(endpoints[0] as string, (client) =>
        client.send(new CreateBucketCommand({ Bucket: name })),
      )
      return name
    },
    perf: async (gatewayIndex = 0) => {
      if (!Number.isInteger(gatewayIndex) || gatewayIndex < 0 || gatewayIndex >= endpoints.length) {
        throw new Error(`startRgw: no gateway ${gatewayIndex}; there are ${endpoints.length}`)
      }
      const socket = join(dir, 'run', `client.rgw.${gatewayIndex}.asok`)
      const { stdout } = await run('ceph', ['--admin-daemon', socket, 'perf', 'dump'])
      return (JSON.parse(stdout) as { rgw: RgwPerfCounters }).rgw
    },
    stop,
  }
}

/** Runs `use` with an S3 client of one gateway, set up as TESTING.md says this RGW needs. */
async function withClient<T>(endpoint: string, use: (client: S3Client) => Promise<T>): Promise<T> {
  const client = new S3Client({
    endpoint,
    region: REGION,
    credentials: { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY },
    forcePathStyle: true,
    // Otherwise a streamed body goes aws-chunked, which this RGW answers with 411.
    requestChecksumCalculation: 'WHEN_REQUIRED',
  })
  try {
    return await use(client)
  } finally {
    client.destroy()
  }
}

/** `count` free ports of 127.0.0.1, no two alike. */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>()
  while (ports.size < count) ports.add(await freePort())
  return [...ports]
}

/**
 * Polls `probe` until it answers true, failing early with the log of a daemon that exits and,
 * after `timeoutMs`, with the log of the last daemon listed (the one being waited for).
 */
async function until(
  what: string,
  daemons: Daemon[],
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const dead = daemons.find((daemon) => daemon.exited())
    if (dead !== undefined) {
      throw new Error(
        `startRgw: ${dead.name} exited (${dead.exitReason()}) while waiting for ${what}:\n${await logsOf(dead)}`,
      )
    }
    if (await probe()) return
    if (Date.now() > deadline) {
      const waitedFor = daemons[daemons.length - 1] as Daemon
      throw new Error(
        `startRgw: timed out after ${timeoutMs} ms waiting for ${what}:\n${await logsOf(waitedFor)}`,
      )
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The tails of a daemon's own Ceph log and of its stdout and stderr. */
async function logsOf(daemon: Daemon): Promise<string> {
  const cephLog = join(dirname(daemon.logFile), `${daemon.name}.log`)
  return [
    `--- ${cephLog}`,
    await tailOf(cephLog),
    `--- ${daemon.logFile}`,
    await tailOf(daemon.logFile),
  ].join('\n')
}
