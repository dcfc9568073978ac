import type { IndexedInstance, ResourceIndex } from '../stored-index/resource-index'

/**
 * Resource indexes for the search tests; the index bench stores states of this shape
 * (bench/src/benches/resource-index/search.ts).
 *
 * @internal
 */

/** One instance of a managed resource at a root-module or module address. */
export function instance(
  address: string,
  type: string,
  identity: Record<string, string> = {},
): IndexedInstance {
  return {
    address,
    module: address.startsWith('module.') ? address.split('.').slice(0, 2).join('.') : '',
    mode: address.startsWith('data.') ? 'data' : 'managed',
    type,
    name: 'x',
    provider: 'provider["registry.terraform.io/hashicorp/aws"]',
    digest: 'd',
    identity,
  }
}

/** An index listing these instances (in any order: the index sorts them). */
export function indexOf(resources: IndexedInstance[]): ResourceIndex {
  return {
    format: 1,
    state_version: 4,
    terraform_version: '1.9.0',
    modules: [],
    providers: ['registry.terraform.io/hashicorp/aws'],
    resources,
    outputs: [],
    truncated: false,
  }
}

const TYPES = [
  'aws_instance',
  'aws_s3_bucket',
  'aws_iam_role',
  'aws_security_group',
  'aws_subnet',
  'aws_route53_record',
  'aws_lambda_function',
  'aws_db_instance',
]

/**
 * A realistic unit of `count` instances: modules with `for_each` keys, IDs, ARNs and names as AWS
 * writes them, all distinct across units (`seed` is the unit's number).
 */
export function syntheticIndex(seed: number, count: number): ResourceIndex {
  const resources: IndexedInstance[] = []
  for (let i = 0; i < count; i += 1) {
    const type = TYPES[i % TYPES.length] as string
    const hex = ((seed * 7919 + i) * 2654435761).toString(16).padStart(17, '0').slice(-17)
    const region = i % 3 === 0 ? 'eu-west-1' : 'us-east-1'
    const address = `module.app["svc${i % 10}"].${type}.main[${Math.floor(i / TYPES.length)}]`
    const id = type === 'aws_instance' ? `i-${hex}` : `${type.slice(4, 8)}-${hex}`
    const identity: Record<string, string> = {
      id,
      arn: `arn:aws:${type.slice(4, 7)}:${region}:123456789012:${type.slice(4)}/${id}`,
    }
    if (i % 2 === 0) identity['name'] = `unit${seed}-svc${i % 10}-${i}`
    resources.push(instance(address, type, identity))
  }
  return indexOf(resources)
}
