import { describe, expect, it } from 'vitest'
import { providerName } from './provider-name'

describe('providerName', () => {
  it.each([
    ['provider["registry.terraform.io/hashicorp/aws"]', 'hashicorp/aws'],
    ['provider["registry.terraform.io/hashicorp/aws"].east', 'hashicorp/aws.east'],
    ['module.vpc.provider["registry.opentofu.org/hashicorp/random"]', 'hashicorp/random'],
    ['registry.terraform.io/hashicorp/aws', 'hashicorp/aws'],
    ['provider["tf.example.com/acme/thing"]', 'tf.example.com/acme/thing'],
  ])('shows %s as %s', (provider, shown) => {
    expect(providerName(provider)).toBe(shown)
  })
})
