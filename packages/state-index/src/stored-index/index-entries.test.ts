import { describe, expect, it } from 'vitest'
import { IndexReader, UnreadableIndexError } from './index-entries'
import type { IndexedInstance, ResourceIndex } from './resource-index'

const entry = (address: string, identity: Record<string, string> = {}): IndexedInstance => ({
  address,
  module: '',
  mode: 'managed',
  type: 't',
  name: 'n',
  provider: 'provider["registry.terraform.io/hashicorp/null"]',
  digest: `1-${address.length}`,
  identity,
})

const INDEX: ResourceIndex = {
  format: 1,
  digests: 'hash64',
  state_version: 4,
  terraform_version: '1.11.4',
  modules: ['module.a'],
  providers: ['registry.terraform.io/hashicorp/null'],
  resources: [
    entry('t.a'),
    // Braces, brackets, quotes and escapes inside strings are text, not structure.
    entry('t.b["}],{\\"resources\\":["]', { id: 'x}{"][\\', resources: '[' }),
    entry('t.c[0]', { name: 'é 😀 \u0001' }),
  ],
  outputs: [{ name: 'o', digest: 'd', sensitive: false }],
  truncated: false,
}

/** The entries and rest a reader gives for `text` cut into chunks of `size` bytes. */
async function read(text: string, size: number) {
  const bytes = Buffer.from(text)
  // eslint-disable-next-line @typescript-eslint/require-await -- the bytes are at hand
  async function* chunks() {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  const reader = new IndexReader(chunks())
  const entries: unknown[] = []
  for await (const batch of reader.batches()) {
    for (const one of batch) entries.push(JSON.parse(Buffer.from(one).toString('utf8')))
  }
  return { entries, rest: reader.rest, count: reader.count }
}

describe('IndexReader', () => {
  const { resources, ...rest } = INDEX
  const layouts = {
    'resources first, as this server writes it': JSON.stringify({ resources, ...rest }),
    'resources last, as earlier servers wrote it': JSON.stringify({ ...rest, resources }),
    'pretty-printed': JSON.stringify(INDEX, null, 2),
  }

  it.each(Object.entries(layouts))(
    'hands over each entry and keeps the rest, whatever the chunks: %s',
    async (_name, text) => {
      for (const size of [1, 2, 3, 7, 64, 1 << 20]) {
        const read_ = await read(text, size)
        expect(read_.entries).toEqual(resources)
        expect(read_.rest).toEqual(rest)
        expect(read_.count).toBe(resources.length)
      }
    },
  )

  it.each([
    ['an index cut short', JSON.stringify(INDEX).slice(0, -3)],
    ['an array', JSON.stringify([INDEX])],
    ['another format', JSON.stringify({ ...INDEX, format: 2 })],
    ['no entries list', JSON.stringify({ ...rest })],
    ['nothing', ''],
  ])('refuses %s', async (_name, text) => {
    await expect(read(text, 5)).rejects.toBeInstanceOf(UnreadableIndexError)
  })

  it('closes the body when its reader stops early, and stops at once when the signal fires', async () => {
    let closed = false
    const text = Buffer.from(JSON.stringify(INDEX))
    // eslint-disable-next-line @typescript-eslint/require-await -- the bytes are at hand
    async function* body() {
      try {
        for (let at = 0; at < text.length; at += 4) yield text.subarray(at, at + 4)
      } finally {
        closed = true
      }
    }
    const controller = new AbortController()
    const reader = new IndexReader(body(), controller.signal)
    let seen = 0
    await expect(
      (async () => {
        for await (const batch of reader.batches()) {
          seen += batch.length
          controller.abort()
        }
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' })
    expect(seen).toBe(1)
    expect(closed).toBe(true)
  })
})
