import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { deliverToTerraform } from './terraform-callback'
import { freePort } from './free-port'

// The callback of `terraform login` as Terraform serves it, played by a small server: the code
// read from the query, then the page, or the connection dropped the moment the code arrived
// (Terraform's `server.Close()`), which a plain fetch reports as "other side closed".

let server: Server | undefined

afterEach(async () => {
  const running = server
  server = undefined
  if (running === undefined) return
  await new Promise<void>((resolve) => {
    running.close(() => {
      resolve()
    })
  })
})

async function callback(
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<{ url: string; codes: string[] }> {
  const codes: string[] = []
  server = createServer((request, response) => {
    codes.push(new URL(request.url ?? '', 'http://localhost').searchParams.get('code') ?? '')
    handle(request, response)
  })
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://localhost:${port}/login?code=the-code&state=s`, codes }
}

describe('delivering the code to terraform login', () => {
  it('delivers it and reads the page', async () => {
    const { url, codes } = await callback((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>done</p>')
    })
    expect(await deliverToTerraform(url)).toBe(200)
    expect(codes).toEqual(['the-code'])
  })

  it('counts a connection closed once the code arrived as delivered, where fetch fails', async () => {
    const { url, codes } = await callback((request) => {
      request.socket.destroy()
    })
    await expect(fetch(url)).rejects.toThrow()
    expect(await deliverToTerraform(url)).toBe('closed')
    expect(codes).toEqual(['the-code', 'the-code'])
  })

  it('fails when nothing listens', async () => {
    const port = await freePort()
    await expect(deliverToTerraform(`http://localhost:${port}/login?code=c`)).rejects.toThrow(
      /ECONNREFUSED/,
    )
  })
})
