export interface CephConfOptions {
  /** The cluster's own directory: data, run dir, logs, admin sockets and keyring live under it. */
  dir: string
  fsid: string
  monPort: number
  /** The cap of the in-memory OSD. */
  memoryBytes: number
}

/**
 * The `ceph.conf` of a throwaway one-node cluster, as TESTING.md describes it: no auth, msgr v1
 * only on 127.0.0.1, pools of one replica and few placement groups on one OSD kept in RAM
 * (memstore), and nothing written outside `dir`. @internal
 */
export function cephConf({ dir, fsid, monPort, memoryBytes }: CephConfOptions): string {
  const global: Record<string, string | number | boolean> = {
    fsid,
    // Explicitly v1: an address without a prefix on a port other than 6789 is taken for msgr2.
    'mon host': `v1:127.0.0.1:${monPort}`,
    'mon initial members': 'a',
    'auth cluster required': 'none',
    'auth service required': 'none',
    'auth client required': 'none',
    'mon allow pool size one': true,
    'osd pool default size': 1,
    'osd pool default min size': 1,
    'osd pool default pg num': 8,
    'osd pool default pgp num': 8,
    'osd pool default pg autoscale mode': 'off',
    'mon max pg per osd': 1000,
    // One host: replicas may share it.
    'osd crush chooseleaf type': 0,
    'ms bind ipv6': false,
    'ms bind msgr2': false,
    // RGW's object names can be longer than the defaults a memstore OSD accepts.
    'osd max object name len': 460,
    'osd max object namespace len': 64,
    'run dir': `${dir}/run`,
    'admin socket': `${dir}/run/$name.asok`,
    'log file': `${dir}/$name.log`,
    keyring: `${dir}/keyring`,
  }
  const sections: Record<string, Record<string, string | number | boolean>> = {
    global,
    'mon.a': { 'mon data': `${dir}/mon` },
    'osd.0': {
      'osd data': `${dir}/osd`,
      'osd objectstore': 'memstore',
      'memstore device bytes': memoryBytes,
      // At start an OSD sends the monitor commands that set its CRUSH location and device class.
      // Sent before the monitor map has arrived they carry no fsid, the monitor refuses them and
      // the OSD exits; startRgw has put the OSD in the CRUSH map already.
      'osd crush update on start': false,
      'osd class update on start': false,
    },
  }
  return Object.entries(sections)
    .map(
      ([name, settings]) =>
        `[${name}]\n${Object.entries(settings)
          .map(([key, value]) => `${key} = ${String(value)}\n`)
          .join('')}`,
    )
    .join('')
}
