import { describe, expect, it } from 'vitest'
import type { AgentApi } from './agent-api'
import { LogSender } from './log-sender'

/** An agent API that keeps the chunks sent, and nothing else (the rest is never called here). */
function keeper(): { api: AgentApi; chunks: Map<number, string> } {
  const chunks = new Map<number, string>()
  const unused = () => Promise.reject(new Error('not called by a log'))
  return {
    chunks,
    api: {
      claim: unused,
      config: unused,
      state: unused,
      heartbeat: unused,
      planned: unused,
      writeState: unused,
      finish: unused,
      log: (_run, sequence, text) => {
        chunks.set(sequence, text)
        return Promise.resolve()
      },
    },
  }
}

describe('LogSender', () => {
  it('scrubs secrets, and marks where a part of the log ends', async () => {
    const { api, chunks } = keeper()
    const log = new LogSender(api, 'run-1', ['hunter2'])
    log.write('plan with hunter2\n')
    expect(await log.mark()).toBe(1)
    log.write('apply\n')
    await log.close()
    expect([...chunks.values()]).toEqual(['plan with ***\n', 'apply\n'])
  })

  it('stops at its limit, saying so once, and sends nothing after', async () => {
    const { api, chunks } = keeper()
    const log = new LogSender(api, 'run-1', [], 2 * 1024 * 1024)
    const line = `${'x'.repeat(1023)}\n`
    for (let index = 0; index < 3 * 1024; index += 1) log.write(line)
    await log.mark()
    log.write('after the limit\n')
    await log.close()
    const text = [...chunks.values()].join('')
    expect(text).toContain('cairn: the log passed 2 MiB')
    expect(text).not.toContain('after the limit')
    expect(Buffer.byteLength(text)).toBeLessThan(2.5 * 1024 * 1024)
  })
})
