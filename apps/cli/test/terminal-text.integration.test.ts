import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CliUser } from './support/cairn'

// The built CLI's one line on stderr for a failure shows the control characters of the message
// written out (issue 30): a message may carry a server's text, or, as here, the user's own, echoed.

describe('cairn, failing on text with control characters', () => {
  let user: CliUser
  beforeAll(async () => {
    user = await CliUser.create()
  })
  afterAll(() => user.dispose())

  it('prints the message with them written out, and exits 2 for bad usage', async () => {
    const principal = 'alice\u001b[2J\u001b]8;;https://evil.example\u0007\r\u009b31m'
    const result = await user.run(['rbac', 'assign', principal, 'reader', '--scope', '*'])
    expect(result.code).toBe(2)
    expect(result.stderr).toBe(
      'cairn: alice\\x1b[2J\\x1b]8;;https://evil.example\\x07\\r\\x9b31m is not a principal: write user:<subject>, email:<address> or group:<name>\n',
    )
  })
})
