import type { RunningRgw, StartRgwOptions } from '@cairn/testkit'
import { BenchError } from '../../harness/bench-error'
import { track } from '../../harness/cleanup'
import { testkitModule } from '../../harness/testkit'

export type { RunningRgw }

/**
 * Starts the test kit's throwaway Ceph RGW (one gateway, the OSD in RAM) and registers it with the
 * bench's cleanup, so that its daemons are killed by PID on every way out. Loaded at run time
 * from the test kit's own build, which `npm run build` makes.
 */
export async function startCeph(options: StartRgwOptions): Promise<RunningRgw> {
  const { startRgw } = await testkitModule<{
    startRgw: (options: StartRgwOptions) => Promise<RunningRgw>
  }>('rgw')
  let rgw: RunningRgw
  try {
    rgw = await startRgw(options)
  } catch (error) {
    throw new BenchError(error instanceof Error ? error.message : String(error))
  }
  const forget = track({
    stop: async () => {
      forget()
      await rgw.stop()
    },
    kill: () => {
      for (const pid of rgw.pids) {
        try {
          process.kill(pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
    },
  })
  return rgw
}
