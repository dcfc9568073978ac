import { createClient, type CairnClient } from '../client'

/**
 * A client whose fetch answers each request with `answer(url)` as JSON, noting the URLs asked: a
 * stand-in for the server in tests of what the SDK sends and how it reads the answers.
 */
export function answering(answer: (url: URL) => { status: number; body: unknown }): {
  asked: URL[]
  client: CairnClient
} {
  const asked: URL[] = []
  const fetch = (input: string | URL | Request): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input)
    asked.push(url)
    const { status, body } = answer(url)
    return Promise.resolve(Response.json(body, { status }))
  }
  return { asked, client: createClient({ baseUrl: 'http://cairn.test', fetch }) }
}
