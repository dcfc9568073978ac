import { describe, expect, it } from 'vitest'
import {
  allowAll,
  createCore,
  createMemoryStore,
  InvalidStateError,
  listAllKeys,
  parseUnitId,
  type ObjectStore,
  type Principal,
} from '@cairn/core'
import { collectDiff } from './diff/diff-listing'
import { StateIndex } from './state-index'
import { bytesOf, ManualClock, terraformState } from '@cairn/core/testing'
import { MAX_STATE_DEPTH } from '@cairn/state-scan'

// How deep a state may nest (issue 30: a state 4,000 levels deep was taken, and then its outputs
// and detailed diffs failed with a stack overflow): refused as it is written, and refused with
// the same clear error when one stored before the limit is read.

const alice: Principal = { subject: 'alice' }
const UNIT = parseUnitId('team/deep')

/** `depth` arrays, one inside the other: `[[[]]]` is 3. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

/**
 * A Terraform state whose output `deep` and whose instance's attribute `input` hold a value that
 * nests the whole document `depth` levels deep (the state, `outputs`, the output and its object
 * around the first; the state's six levels to `attributes` around the second). Written as text:
 * `JSON.stringify` itself overflows the stack on a value thousands of levels deep.
 */
function deepState(serial: number, depth: number): string {
  const resource = {
    mode: 'managed',
    type: 'terraform_data',
    name: 'deep',
    provider: 'provider["terraform.io/builtin/terraform"]',
    instances: [{ schema_version: 0, attributes: { id: 'x', input: 0 }, sensitive_attributes: [] }],
  }
  const header = { version: 4, terraform_version: '1.11.4', serial, lineage: 'nesting' }
  return [
    JSON.stringify(header).slice(0, -1),
    `,"outputs":{"deep":{"value":${nested(depth - 3)},"type":"dynamic"}}`,
    `,"resources":[${JSON.stringify(resource).replace('"input":0', `"input":${nested(depth - 6)}`)}]}`,
  ].join('')
}

async function setup() {
  const store = createMemoryStore()
  const clock = new ManualClock()
  const index = new StateIndex()
  const core = {
    ...createCore({ store, authorizer: allowAll, clock, extensions: [index] }),
    resources: index.resources,
  }
  await core.units.create(alice, UNIT)
  const write = async (text: string, chunk?: number) => {
    clock.advance(1000)
    return core.states.write(alice, UNIT, bytesOf(text, chunk), { source: 'api' })
  }
  return { store, core, write }
}

/** Replaces the bytes of the unit's newest stored state, as a server before the limit stored them. */
async function storeAsBefore(store: ObjectStore, text: string): Promise<void> {
  const states: string[] = []
  for await (const key of listAllKeys(store, 'units/')) {
    if (key.endsWith('.tfstate')) states.push(key)
  }
  const newest = states.sort().at(-1)
  if (newest === undefined) throw new Error('no state stored')
  await store.put(newest, bytesOf(text))
}

describe('the nesting limit of a state', () => {
  it('takes a state nested exactly as deep as the limit, with its outputs and detailed diff', async () => {
    const { core, write } = await setup()
    await write(terraformState({ serial: 1 }))
    await write(deepState(2, MAX_STATE_DEPTH))
    const outputs = await core.versions.outputs(alice, UNIT)
    expect(JSON.stringify(outputs.outputs?.['deep']?.value)).toBe(nested(MAX_STATE_DEPTH - 3))
    const diff = await core.resources.diff(alice, UNIT, { detail: true })
    expect((await diff.outputs()).added.map((output) => output.name)).toEqual(['deep'])
  })

  it.each([
    ['one level', MAX_STATE_DEPTH + 1, undefined],
    ['thousands of levels, in small chunks', 10_000, 97],
  ])(
    'refuses a state nested deeper than the limit by %s, naming the limit, and keeps the unit as it was',
    async (_, depth, chunk) => {
      const { core, write } = await setup()
      const first = await write(terraformState({ serial: 1 }))
      const refused = write(deepState(2, depth), chunk)
      await expect(refused).rejects.toThrow(InvalidStateError)
      await expect(refused).rejects.toThrow(`nested deeper than ${MAX_STATE_DEPTH} levels at byte`)
      expect((await core.units.get(alice, UNIT)).sha256).toBe(first.sha256)
    },
  )

  it('answers a deep state stored before the limit with the same clear error on every reader', async () => {
    const { store, core, write } = await setup()
    await write(terraformState({ serial: 1 }))
    await write(terraformState({ serial: 2, outputs: { shallow: 'yes' } }))
    await storeAsBefore(store, deepState(2, 4_000))
    const readers = {
      outputs: () => core.versions.outputs(alice, UNIT),
      'outputs-only view': () => core.versions.outputsView(alice, UNIT),
      'detailed diff': async () =>
        collectDiff(await core.resources.diff(alice, UNIT, { detail: true })),
    }
    for (const [name, read] of Object.entries(readers)) {
      const error: unknown = await read().then(
        () => new Error(`${name} was served`),
        (thrown: unknown) => thrown,
      )
      expect(error, name).toBeInstanceOf(InvalidStateError)
      expect((error as Error).message, name).toContain(`nested deeper than ${MAX_STATE_DEPTH}`)
    }
    // What the index holds needs no body: the plain diff is still served.
    const diff = await core.resources.diff(alice, UNIT)
    expect((await diff.outputs()).added.map((output) => output.name)).toEqual(['shallow'])
  })
})
