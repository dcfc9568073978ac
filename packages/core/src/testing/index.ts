export { ManualClock } from './manual-clock'
export { objectStoreContract } from './object-store-contract'
export type { StoreFactory } from './object-store-contract'
export { coreContract } from './core-contract'
export { createMemoryStore } from '../storage/memory-store'
export { terraformState, bytesOf, textOf } from './fixtures'
export { dependencyContract } from './dependency-contract'
export { GrantTable } from './grant-table'
export type { StoreDrivers } from './store-drivers'
export { useStoreDrivers } from './store-drivers'
export {
  DRIVERS,
  id,
  LOCK_A,
  observe,
  root,
  seedUnit,
  state,
  UNIT,
  UPSTREAM,
  write,
} from './seeded-unit'
