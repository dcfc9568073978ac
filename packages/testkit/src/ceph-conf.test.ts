import { describe, expect, it } from 'vitest'

import { cephConf } from './ceph-conf'

const conf = cephConf({
  dir: '/tmp/cluster',
  fsid: '00000000-0000-4000-8000-000000000000',
  monPort: 40123,
  memoryBytes: 512 * 1024 ** 2,
})

function section(name: string): string {
  return conf.split(/^(?=\[)/m).find((text) => text.startsWith(`[${name}]`)) ?? ''
}

describe('the ceph.conf of a throwaway cluster', () => {
  it('names the monitor as msgr v1 on 127.0.0.1, whatever its port', () => {
    expect(section('global')).toContain('mon host = v1:127.0.0.1:40123\n')
    expect(section('global')).toContain('ms bind msgr2 = false\n')
  })

  it('turns auth off', () => {
    for (const which of ['cluster', 'service', 'client']) {
      expect(section('global')).toContain(`auth ${which} required = none\n`)
    }
  })

  it('keeps the OSD in RAM under the given cap', () => {
    expect(section('osd.0')).toContain('osd objectstore = memstore\n')
    expect(section('osd.0')).toContain(`memstore device bytes = ${512 * 1024 ** 2}\n`)
  })

  it('writes nothing outside the cluster directory', () => {
    const paths = conf.match(/= \/\S+/g) ?? []
    expect(paths.length).toBeGreaterThan(0)
    expect(paths.filter((path) => !path.startsWith('= /tmp/cluster/'))).toEqual([])
  })
})
