import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

/** The paths of `paths` that the checkout's ignore rules leave out of `git status` and `git add`. */
function ignored(paths: string[]): string[] {
  // --no-index: the rules alone, whether or not a path is tracked today.
  const result = spawnSync('git', ['check-ignore', '--no-index', '--stdin'], {
    cwd: ROOT,
    input: paths.join('\n'),
    encoding: 'utf8',
  })
  if (result.error !== undefined) throw result.error
  // 0: some are ignored, 1: none is; anything else is git failing.
  expect(result.status, result.stderr).toBeLessThanOrEqual(1)
  return result.stdout.split('\n').filter((line) => line !== '')
}

describe("the checkout's ignore rules", () => {
  it('leave out what Terraform writes when the README is followed inside the checkout', () => {
    const terraformFiles = [
      // `./cairn unit pull team/app/prod > prod.tfstate`
      'prod.tfstate',
      'terraform.tfstate',
      'terraform.tfstate.backup',
      'net/terraform.tfstate.backup',
      'net/.terraform/terraform.tfstate',
      '.terraform/terraform.tfstate',
    ]
    expect(ignored(terraformFiles)).toEqual(terraformFiles)
  })

  it("keep the store's own state files of the test fixtures, today's and new ones", () => {
    expect(
      ignored([
        'packages/core/test/fixtures/layout-1/units/solo!/emjuohwmoc4b92c/states/20260101T000006.000Z-c0fcd6f6ec92e79b.tfstate',
        'packages/core/test/fixtures/layout-9/units/a!/b/states/c.tfstate',
      ]),
    ).toEqual([])
  })
})
