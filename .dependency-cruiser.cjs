// The seams between Cairn's packages, checked by `npm run lint` (DESIGN "Shape": dependencies
// point inward: apps -> adapters and capabilities -> core -> contract). `npx depcruise packages
// apps --config .dependency-cruiser.cjs` runs it alone.
/** Packages that plug into core: they import core, never each other. */
const EXTENSIONS = ['state-index', 'webhooks', 'rbac', 'audit', 'runs', 'encryption', 'ci-identity']

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'migrate-is-a-client',
      severity: 'error',
      comment:
        'the importer and exporter run beside Terraform, not in the server: they reach Cairn through the SDK only',
      from: { path: '^packages/migrate/' },
      to: {
        path: [
          '^packages/(core|server|storage-s3|tfe-adapter|runs|rbac|audit|webhooks|state-index)/',
          '^apps/',
        ],
      },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'A file never imports itself back, through values or types: split the shared part out.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-is-a-leaf',
      severity: 'error',
      comment:
        'The /v1 contract imports valibot and nothing else: nothing of the workspace, nothing of Node.',
      from: { path: '^packages/contract/' },
      to: {
        pathNot: ['^packages/contract/', 'node_modules/valibot/', 'node_modules/vitest/'],
      },
    },
    {
      name: 'state-scan-is-a-leaf',
      severity: 'error',
      comment:
        'The scanner is bytes to facts: it imports nothing of the workspace (core builds on it).',
      from: { path: '^packages/state-scan/' },
      to: { path: ['^(packages|apps)/', '^@cairn/'], pathNot: '^packages/state-scan/' },
    },
    {
      name: 'core-imports-no-extension',
      severity: 'error',
      comment:
        'Core is the state store: its extensions plug in through createCore({ extensions }), it never imports them (nor any adapter or app).',
      from: { path: '^packages/core/' },
      to: {
        // A package's files, or its name when it is not even a dependency (so not resolved).
        path: ['^(packages|apps)/', '^@cairn/'],
        pathNot: [
          '^packages/(core|contract|state-scan)/',
          '^@cairn/(core|contract|state-scan)($|/)',
        ],
      },
    },
    {
      name: 'extensions-import-core-not-each-other',
      severity: 'error',
      comment:
        'An extension of core imports core, the contract and the scanner, never another extension.',
      from: { path: `^packages/(${EXTENSIONS.join('|')})/` },
      to: {
        path: [`^packages/(${EXTENSIONS.join('|')})/`, `^@cairn/(${EXTENSIONS.join('|')})$`],
        pathNot: [`^packages/$1/`, `^@cairn/$1$`],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)dist/', '(^|/)node_modules/', '^packages/state-scan/wasm/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.mjs'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
}
