/**
 * The store of many units that the rbac and dashboard benches build: units spread over 100
 * prefixes, `team-007/app-0000` being unit 7.
 */

/** How many prefixes the units are spread over. */
export const STORE_PREFIXES = 100

/** The prefix of number `prefix`: `team-007`. */
export const team = (prefix: number): string => `team-${String(prefix).padStart(3, '0')}`

/** Unit `index` lives under prefix `index % 100`: `team-007/app-0000` is unit 7. */
export const unitName = (index: number): string =>
  `${team(index % STORE_PREFIXES)}/app-${String(Math.floor(index / STORE_PREFIXES)).padStart(4, '0')}`
