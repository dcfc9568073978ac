import { describe, expect, it } from 'vitest'
import { IfMatchForm, normalizeEtag } from './etag'

const preconditionFailed = () =>
  Object.assign(new Error('PreconditionFailed'), { $metadata: { httpStatusCode: 412 } })

/** A server that compares If-Match with the current ETag in one form only. */
function server(current: string, wants: 'quoted' | 'unquoted') {
  const sent: string[] = []
  const send = (ifMatch: string) => {
    sent.push(ifMatch)
    const expected = wants === 'quoted' ? `"${current}"` : current
    return ifMatch === expected ? Promise.resolve('written') : Promise.reject(preconditionFailed())
  }
  return { sent, send }
}

describe('normalizeEtag', () => {
  it.each([['"abc"'], ['abc'], ['W/"abc"']])('gives %s as "abc"', (etag) => {
    expect(normalizeEtag(etag)).toBe('"abc"')
  })
})

describe('IfMatchForm', () => {
  it('sends the quoted form to a server that wants it, and keeps to it', async () => {
    const form = new IfMatchForm()
    const aws = server('abc', 'quoted')
    expect(await form.send('"abc"', aws.send)).toBe('written')
    expect(form.learned).toBe('quoted')
    await expect(form.send('"old"', aws.send)).rejects.toThrow('PreconditionFailed')
    expect(aws.sent).toEqual(['"abc"', '"old"'])
  })

  it('retries unquoted once on a server that compares the bare value, then sends it bare', async () => {
    const form = new IfMatchForm()
    const rgw = server('abc', 'unquoted')
    expect(await form.send('"abc"', rgw.send)).toBe('written')
    expect(form.learned).toBe('unquoted')
    expect(await form.send('"abc"', rgw.send)).toBe('written')
    expect(rgw.sent).toEqual(['"abc"', 'abc', 'abc'])
  })

  it('never turns a real conflict into a success while the form is unknown', async () => {
    const form = new IfMatchForm()
    const rgw = server('new', 'unquoted')
    await expect(form.send('"old"', rgw.send)).rejects.toThrow('PreconditionFailed')
    expect(form.learned).toBeUndefined()
    expect(rgw.sent).toEqual(['"old"', 'old'])
  })

  it('does not retry other failures', async () => {
    const form = new IfMatchForm()
    let calls = 0
    const send = () => {
      calls += 1
      return Promise.reject(new Error('boom'))
    }
    await expect(form.send('"abc"', send)).rejects.toThrow('boom')
    expect(calls).toBe(1)
  })
})
