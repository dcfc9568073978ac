import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Webhook } from '@cairn/sdk'
import { inProcessApp, type InProcessApp } from '@cairn/server/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { cairn, json, routeTo, run, useCliHome } from './testing/in-process-cli'
import { wireStub } from './testing/wire-stub'

/**
 * What the CLI prints for people never lets a server's text act on the terminal (issue 30: `cairn
 * unit show` and `cairn search` printed a state's escape sequences raw). A state whose resource
 * name, attribute values and outputs carry a screen clear, a hyperlink and a carriage return is
 * pushed to the real app in process; every human printer shows those written out, and `--json`
 * stays JSON that means the same value.
 */

const homeDir = useCliHome('cairn-terminal-text-')

/**
 * Clears the screen, opens a hyperlink to another place, returns to the line's start, and starts a
 * colour with the one-byte C1 form of ESC [ (which JSON leaves raw).
 */
const HOSTILE = '\u001b[2J\u001b]8;;https://evil.example\u0007click\u001b]8;;\u0007\rok\u009b1m'
/** The same, as the CLI shows it. */
const VISIBLE = '\\x1b[2J\\x1b]8;;https://evil.example\\x07click\\x1b]8;;\\x07\\rok\\x9b1m'
// eslint-disable-next-line no-control-regex -- looking for them is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

function state(serial: number, value: string): string {
  return JSON.stringify({
    version: 4,
    terraform_version: '1.11.4',
    serial,
    lineage: 'terminal',
    outputs: {
      [`note${HOSTILE}`]: { value: { text: `${value}${HOSTILE}` }, type: 'dynamic' },
    },
    resources: [
      {
        mode: 'managed',
        type: 'terraform_data',
        name: `evil${HOSTILE}`,
        provider: 'provider["terraform.io/builtin/terraform"]',
        instances: [
          {
            schema_version: 0,
            attributes: { id: `id-${HOSTILE}`, input: `${value}${HOSTILE}` },
            sensitive_attributes: [],
          },
        ],
      },
    ],
  })
}

let app: InProcessApp | undefined
afterEach(() => app?.close())

/** The real app in process, `team/app` pushed twice with the hostile state through the CLI. */
async function pushed(): Promise<void> {
  app = await inProcessApp()
  routeTo(app, [])
  await cairn('unit', 'create', 'team/app')
  for (const serial of [1, 2]) {
    const file = join(homeDir(), `${String(serial)}.tfstate`)
    await writeFile(file, state(serial, `v${String(serial)}`))
    await cairn('unit', 'push', 'team/app', file)
  }
}

/** Runs a command that must succeed: its stdout and stderr, neither holding a control character. */
async function printed(...args: string[]): Promise<string> {
  const result = await run(...args)
  if (result.error !== undefined) throw result.error
  expect(result.stdout, args.join(' ')).not.toMatch(CONTROL)
  expect(result.stderr, args.join(' ')).not.toMatch(CONTROL)
  return result.stdout
}

describe("a state's text in human output", () => {
  it('is written out by cairn unit show, cairn search and cairn unit outputs', async () => {
    await pushed()
    const show = await printed('unit', 'show', 'team/app')
    expect(show).toContain(`terraform_data.evil${VISIBLE}`)
    expect(show).toContain(`id-${VISIBLE}`)
    expect(show).toContain(`  note${VISIBLE}`)

    const search = await printed('search', '--type', 'terraform_data')
    expect(search).toContain(`team/app  terraform_data.evil${VISIBLE}`)

    const outputs = await printed('unit', 'outputs', 'team/app')
    expect(outputs).toContain(`note${VISIBLE} = {`)
    expect(outputs).toContain(`"text" = "v2\\u001b[2J`)
  })

  it('is written out by cairn unit diff --detail, in its attribute values too', async () => {
    await pushed()
    const diff = await printed('unit', 'diff', 'team/app', '--detail')
    expect(diff).toContain(`~ terraform_data.evil${VISIBLE}`)
    expect(diff).toContain('~ input: "v1\\u001b[2J')
    expect(diff).toContain(`~ note${VISIBLE}`)
  })

  it('stays JSON with --json, meaning the same value with its controls escaped', async () => {
    await pushed()
    const result = await run('unit', 'outputs', 'team/app', '--json')
    expect(result.stdout).not.toMatch(CONTROL)
    const answer = await json<{ outputs: Record<string, { value: { text: string } }> }>(
      'unit',
      'outputs',
      'team/app',
    )
    expect(answer.outputs[`note${HOSTILE}`]?.value.text).toBe(`v2${HOSTILE}`)
  })
})

describe("a server's text in human output", () => {
  it('is written out in every table, whatever the server sends', async () => {
    const hook: Webhook = {
      id: 'whk-1',
      url: `https://hooks.example.com/${HOSTILE}`,
      events: ['unit.written'],
      prefix: '*',
      description: `deploys${HOSTILE}`,
      created: '2026-01-01T00:00:00.000Z',
      by: `root${HOSTILE}`,
    }
    // A server that answers raw text (an older one, or one in the wrong hands).
    routeTo(
      wireStub(() => ({ status: 200, body: { webhooks: [hook] } })),
      [],
    )
    const listed = await printed('webhooks', 'ls')
    expect(listed).toContain(`https://hooks.example.com/${VISIBLE}`)
    expect(listed).toContain(`root${VISIBLE}`)
    // The SDK reads a description with the server's own rule: without its controls.
    expect(listed).toContain('deploys[2J]8;;https://evil.exampleclick]8;; ok1m')
  })
})
