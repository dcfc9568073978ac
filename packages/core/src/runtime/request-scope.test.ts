import { describe, expect, it } from 'vitest'
import { beforeAnswer, inRequestScope } from './request-scope'

/** A promise and the functions that settle it. */
function deferred() {
  let resolve!: () => void
  let reject!: (error: Error) => void
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok
    reject = fail
  })
  return { promise, resolve, reject }
}

describe('beforeAnswer', () => {
  it('lets the serving go on and holds the answer until the work is done', async () => {
    const work = deferred()
    const steps: string[] = []
    const answered = inRequestScope(async () => {
      await beforeAnswer(work.promise.then(() => void steps.push('work')))
      steps.push('served')
      return 'answer'
    }).then((answer) => {
      steps.push('answered')
      return answer
    })
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(steps).toEqual(['served'])
    work.resolve()
    expect(await answered).toBe('answer')
    expect(steps).toEqual(['served', 'work', 'answered'])
  })

  it('fails the answer with the work that failed, and keeps the serving error when both fail', async () => {
    await expect(
      inRequestScope(async () => {
        await beforeAnswer(Promise.reject(new Error('note lost')))
        return 'answer'
      }),
    ).rejects.toThrow('note lost')
    await expect(
      inRequestScope(async () => {
        await beforeAnswer(Promise.reject(new Error('note lost')))
        throw new Error('refused')
      }),
    ).rejects.toThrow('refused')
  })

  it('waits for work handed over by work, and is the work itself outside a request', async () => {
    const steps: string[] = []
    await inRequestScope(async () => {
      await beforeAnswer(
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, 5))
          await beforeAnswer(
            new Promise((resolve) => setTimeout(resolve, 5)).then(() => void steps.push('inner')),
          )
        })(),
      )
    })
    expect(steps).toEqual(['inner'])
    const work = deferred()
    const outside = beforeAnswer(work.promise)
    let done = false
    void outside.then(() => (done = true))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(done).toBe(false)
    work.resolve()
    await outside
    expect(done).toBe(true)
  })
})
