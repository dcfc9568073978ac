/** What a stub answers: a status and a JSON body (none for 204). */
export interface StubAnswer {
  status: number
  body?: unknown
}

/** A request the stub received, with its JSON body when it had one. */
export interface StubRequest {
  method: string
  url: URL
  body: unknown
}

/**
 * A stand-in for server routes this tree does not hold yet, answering by the `/v1` wire contract:
 * `answer` sees each request and says what to reply. It records every request, so a test can
 * check the query and body a command sent. Route it with `routeTo`.
 */
export function wireStub(answer: (request: StubRequest) => StubAnswer): {
  received: StubRequest[]
  request: (request: Request) => Promise<Response>
} {
  const received: StubRequest[] = []
  return {
    received,
    async request(request) {
      const text = await request.text()
      const seen = {
        method: request.method,
        url: new URL(request.url),
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      }
      received.push(seen)
      const { status, body } = answer(seen)
      return body === undefined ? new Response(null, { status }) : Response.json(body, { status })
    },
  }
}
