import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { request } from 'node:https'
import { join } from 'node:path'

export interface TestCa {
  /** The CA certificate (PEM), for SSL_CERT_FILE and for clients' `ca`. */
  caPath: string
  /** A server certificate for localhost and 127.0.0.1 signed by the CA, and its key. */
  certPath: string
  keyPath: string
  ca: Buffer
}

/**
 * Makes a throwaway certificate authority and a server certificate for `localhost` and
 * `127.0.0.1` with the openssl command (P-256 keys, valid two days), in `dir`.
 */
export async function makeTestCa(dir: string): Promise<TestCa> {
  const path = (name: string) => join(dir, name)
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
  await openssl([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Cairn Test CA',
  ])
  await openssl([
    'req',
    ...ec,
    '-keyout',
    path('server.key'),
    '-out',
    path('server.csr'),
    '-subj',
    '/CN=localhost',
  ])
  await writeFile(
    path('server.ext'),
    [
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature',
      'extendedKeyUsage=serverAuth',
      '',
    ].join('\n'),
  )
  await openssl([
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.pem'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-out',
    path('server.pem'),
    '-days',
    '2',
    '-extfile',
    path('server.ext'),
  ])
  return {
    caPath: path('ca.pem'),
    certPath: path('server.pem'),
    keyPath: path('server.key'),
    ca: await readFile(path('ca.pem')),
  }
}

function openssl(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('openssl', args, (error, _stdout, stderr) => {
      if (error === null) resolve()
      else
        reject(
          new Error(
            `openssl ${args[0] ?? ''} failed (install it with: apt-get install -y openssl): ${stderr}`,
          ),
        )
    })
  })
}

export interface HttpsAnswer {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

/** One HTTPS request that trusts `ca` (Node's fetch cannot be given a CA after it starts). */
export function httpsRequest(
  url: string,
  ca: Buffer,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    // Node sends a DELETE body with neither a length nor chunking unless told its length.
    const length =
      options.body === undefined
        ? {}
        : { 'Content-Length': String(Buffer.byteLength(options.body)) }
    const req = request(
      url,
      { method: options.method ?? 'GET', headers: { ...length, ...options.headers }, ca },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(options.body)
  })
}
