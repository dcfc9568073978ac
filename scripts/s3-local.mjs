// `npm run s3:local`: a throwaway S3 server on this machine, to try Cairn's `-storage s3`: the test
// kit's Ceph RGW (real conditional writes; installed with apt-get first when missing, as root),
// one bucket, and the exact line that starts Cairn on it. It keeps everything in memory: Ctrl-C
// stops it, and what it held is gone.
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { bootstrap, root } from './bootstrap.mjs'

const BUCKET = 'cairn'
/** The build of the test kit's startRgw, which `npm run build` makes (the kit exports sources). */
const RGW = join('packages', 'testkit', 'dist', 'rgw.js')

function say(line) {
  process.stderr.write(`cairn: ${line}\n`)
}

// The SDK the kit makes its bucket with warns that its releases from 2027 need Node 22.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

bootstrap({ stdoutClean: true, unlessCurrent: [RGW] })
const { startRgw } = await import(pathToFileURL(join(root, RGW)).href)

say('starting a throwaway S3 server (Ceph RGW) on 127.0.0.1; about 20 seconds')
let rgw
try {
  rgw = await startRgw()
} catch (error) {
  say(error instanceof Error ? error.message : String(error))
  process.exit(1)
}
// Cairn's own files for this try: the key every instance on a bucket must share, and a data
// directory for local mode's admin token. Gone with the S3 server.
const dir = mkdtempSync(join(tmpdir(), 'cairn-s3-local-'))

let stopping = false
async function stop(code) {
  if (stopping) return
  stopping = true
  await rgw.stop()
  rmSync(dir, { recursive: true, force: true })
  say('the S3 server stopped; everything it held is gone')
  process.exit(code)
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => void stop(0))

await rgw.createBucket(BUCKET)
const signingKey = join(dir, 'signing.pem')
const { privateKey } = generateKeyPairSync('ed25519')
writeFileSync(signingKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })

const env = [
  `AWS_ACCESS_KEY_ID=${rgw.accessKeyId}`,
  `AWS_SECRET_ACCESS_KEY=${rgw.secretAccessKey}`,
  `AWS_REGION=${rgw.region}`,
  `SVC_TOKENS_PRIVATE_KEY_PEM_PATH=${signingKey}`,
]
const flags = ['-storage s3', `-s3-endpoint ${rgw.endpoint}`, `-s3-bucket ${BUCKET}`]
process.stdout.write(
  [
    `An S3 server (Ceph RGW) runs at ${rgw.endpoint}, with the bucket "${BUCKET}". Start Cairn on it`,
    'from this checkout, in another terminal:',
    '',
    `  ${env.join(' ')} npm start -- ${flags.join(' ')} -data-dir ${join(dir, 'data')}`,
    '',
    'The AWS CLI reaches the bucket with the same variables and',
    `--endpoint-url ${rgw.endpoint}. Everything is kept in memory: Ctrl-C stops the S3 server, and`,
    'what it held is gone.',
    '',
  ].join('\n'),
)

// The daemons run on their own: watch them, so that one that dies is reported rather than left
// to fail Cairn's requests.
setInterval(() => {
  const gone = rgw.pids.find((pid) => {
    try {
      process.kill(pid, 0)
      return false
    } catch {
      return true
    }
  })
  if (gone !== undefined) {
    say(`a daemon of the S3 server (PID ${gone}) exited; stopping the others`)
    void stop(1)
  }
}, 2_000)
