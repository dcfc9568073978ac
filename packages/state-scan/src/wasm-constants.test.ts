import { describe, expect, it } from 'vitest'
import { instantiateScanModule } from './json-scan'
import { checkMirrored, hostConstants } from './wasm-constants'

describe('the constants the module and the host share', () => {
  it('agree, for the module that is committed', () => {
    expect(checkMirrored(instantiateScanModule())).toBe(true)
  })

  it('are each exported by the module', () => {
    const exports = instantiateScanModule()
    for (const name of Object.keys(hostConstants())) expect(exports, name).toHaveProperty(name)
  })

  it.each(['SLICE', 'E_DEPTH', 'RESOURCE_END', 'RECORD_DIGEST_AT', 'F_PROVIDER'])(
    'stop the scan naming %s when the module has another',
    (name) => {
      const exports = { ...instantiateScanModule() }
      const host = hostConstants()[name] as number
      exports[name] = { value: host + 1 }
      expect(() => checkMirrored(exports)).toThrow(
        `the state scanner's WebAssembly module and its host disagree on ${name}: the module has ${host + 1}, the host ${host}.`,
      )
    },
  )

  it('stop the scan when the module lacks one', () => {
    const { MAX_DEPTH: _gone, ...exports } = instantiateScanModule()
    expect(() => checkMirrored(exports)).toThrow('disagree on MAX_DEPTH: the module has undefined')
  })
})
