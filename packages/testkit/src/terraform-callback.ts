import { request } from 'node:http'

/**
 * Takes the redirect back to `terraform login`'s callback server, as the browser would, and says
 * how it ended: the callback page's status, or `closed`.
 *
 * Terraform listens on 127.0.0.1 (tcp4) whatever the redirect URI names (`localhost`), so the
 * request goes there. Its handler hands the code on before it writes its page, and the moment the
 * code arrives Terraform closes its callback server (`server.Close()` in
 * internal/command/login.go), which drops the connection, often before the page is written: on
 * a busy machine the request then ends with "other side closed". That is Terraform's normal end,
 * not a failure; whether the login worked is for terraform's exit code and the token it saved to
 * say. Nobody listening (ECONNREFUSED) is a failure, and rejects.
 */
export function deliverToTerraform(callback: string): Promise<number | 'closed'> {
  const url = new URL(callback)
  return new Promise((resolve, reject) => {
    let sent = false
    const req = request(
      {
        host: '127.0.0.1',
        port: url.port,
        path: `${url.pathname}${url.search}`,
        headers: { Host: url.host },
      },
      (res) => {
        res.resume()
        res.on('end', () => {
          resolve(res.statusCode ?? 0)
        })
        // Closed mid-page: the code was read, the page cut short.
        res.on('error', () => {
          resolve('closed')
        })
      },
    )
    req.on('finish', () => {
      sent = true
    })
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (sent && (error.code === 'ECONNRESET' || error.message === 'socket hang up')) {
        resolve('closed')
        return
      }
      reject(error)
    })
    req.end()
  })
}
