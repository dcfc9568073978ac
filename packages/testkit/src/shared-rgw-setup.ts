// The integration tier's global setup (vitest.config.ts): one Ceph cluster for the suites that
// ask for it with `useRgw({ shared: true })`, started at the first ask.
import { serveSharedRgw } from './shared-rgw'

export default function setup(): () => Promise<void> {
  return serveSharedRgw()
}
