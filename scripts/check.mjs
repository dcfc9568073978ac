// `npm run typecheck` and `npm run lint` (`node scripts/check.mjs typecheck lint` runs both): each
// checks the whole workspace as ONE TypeScript program (the root tsconfig.json includes every
// package), so every file is parsed and typed once. Checked per package, each package also typed
// the sources of every package it imports (they export their TypeScript), which made the same
// check cost five times as much. Asked for both, the program is built once and handed to ESLint's
// type-aware rules, which then reuse the types the compiler has worked out: about half the CPU of
// the two run one after the other (`npm test` runs them so). Each prints one line when done.
import { join } from 'node:path'
import { ESLint } from 'eslint'
import ts from 'typescript'
import { root } from './bootstrap.mjs'

/** What `lint` covers. */
const LINTED = ['packages', 'apps', 'bench']
/**
 * The contract is typed a second time on its own, without Node's types: it must run wherever the
 * SDK does, which the workspace program (with Node's types) cannot tell.
 */
const ALONE = [join(root, 'packages', 'contract', 'tsconfig.json')]

const names = process.argv.slice(2)
if (names.length === 0 || names.some((name) => !['typecheck', 'lint'].includes(name))) {
  process.stderr.write('usage: node scripts/check.mjs typecheck|lint [typecheck|lint]\n')
  process.exit(2)
}

/** The program of a tsconfig.json; exits on a config that cannot be read. */
function programOf(configPath) {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        report([diagnostic])
        process.exit(1)
      },
    },
  )
  if (parsed === undefined) process.exit(1)
  if (parsed.errors.length > 0) {
    report(parsed.errors)
    process.exit(1)
  }
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: { ...parsed.options, noEmit: true },
    projectReferences: parsed.projectReferences,
  })
}

/** Prints diagnostics as tsc does (`file(line,col): error TSnnnn: message`). */
function report(diagnostics) {
  process.stderr.write(
    ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => root,
      getNewLine: () => '\n',
    }),
  )
}

function done(name, started) {
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  process.stdout.write(`cairn: ${name} passed over the whole workspace in ${seconds} s\n`)
}

const started = performance.now()
const program = programOf(join(root, 'tsconfig.json'))
let failed = false

if (names.includes('typecheck')) {
  const diagnostics = [
    ...ts.getPreEmitDiagnostics(program),
    ...ALONE.flatMap((config) => ts.getPreEmitDiagnostics(programOf(config))),
  ]
  if (diagnostics.length > 0) {
    report(diagnostics)
    process.stderr.write('cairn: typecheck failed\n')
    failed = true
  } else done('typecheck', started)
}

if (names.includes('lint')) {
  const eslint = new ESLint({
    cwd: root,
    // The TypeScript files' type-aware rules read the program above instead of building their own.
    overrideConfig: [
      {
        files: ['**/*.ts', '**/*.tsx'],
        languageOptions: { parserOptions: { programs: [program], project: null } },
      },
    ],
  })
  const results = await eslint.lintFiles(LINTED)
  const problems = results.reduce((sum, result) => sum + result.errorCount + result.warningCount, 0)
  if (problems > 0) {
    const formatter = await eslint.loadFormatter('stylish')
    process.stderr.write(await formatter.format(results))
    process.stderr.write('cairn: lint failed\n')
    failed = true
  } else done('lint', started)
}

process.exit(failed ? 1 : 0)
