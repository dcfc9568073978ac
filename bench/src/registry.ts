import type { Bench } from './harness/bench-definition'
import { dashboard } from './benches/dashboard'
import { dependencyStatus } from './benches/dependency-status'
import { hostileProbe } from './benches/hostile-probe'
import { rbac } from './benches/rbac'
import { requestFloor } from './benches/request-floor'
import { resourceIndex } from './benches/resource-index/resource-index'
import { s3 } from './benches/s3/s3'
import { s3Api } from './benches/s3-api'
import { stateTransfer } from './benches/state-transfer'
import { terraformApply } from './benches/terraform/terraform-apply'
import { runs } from './benches/runs'
import { migration } from './benches/migration'
import { encryption } from './benches/encryption'

/** Every bench, in the order `bench:all` runs them and the README lists them. */
export const registry: readonly Bench[] = [
  stateTransfer,
  dependencyStatus,
  requestFloor,
  rbac,
  s3,
  s3Api,
  terraformApply,
  runs,
  migration,
  encryption,
  resourceIndex,
  dashboard,
  hostileProbe,
]
