// `npm run lint` (after tsc and prettier): the layer boundaries of ARCHITECTURE.md and the test
// habits of CONVENTIONS.md, as rules a tool enforces. test/unit/lint.test.ts proves each one
// reports a deliberate violation.
import './eslint/typescriptApi.js';
import tseslint from 'typescript-eslint';
import layers from './eslint/layers.js';

const root = import.meta.dirname;

/** Workflow code is replayed deterministically: values come only from these (habit 7). */
export const WORKFLOW_PACKAGES = ['@temporalio/workflow'];
/**
 * Pure modules (no I/O, no clock, no Node built-ins) that workflows may import by value; a folder
 * covers the files under it. The workflow contracts (CONVENTIONS.md habit 14) are one such folder.
 */
export const WORKFLOW_PURE_FILES = ['lib/webhooks/schedule', 'lib/temporal/contracts', 'lib/temporal/details', 'lib/zoneFormat'];

export const layerRule = {
  root,
  forbid: [
    { from: 'lib', to: 'api', because: 'lib/ is the domain below both doors; move the shared code into lib/.' },
    { from: 'api/mcp', to: 'api/rest', because: 'the doors share the door-neutral pipeline, not each other.' },
    { from: 'activities', to: 'api', because: 'activities receive their dependencies from workers/; shared rules live in lib/.' },
    { from: 'workers', to: 'api', because: 'the worker process wires lib/ and activities/, never the HTTP doors.' },
    {
      from: 'bench',
      to: 'test',
      because: 'a bench runs without the test suite; a piece both need lives outside test/ (bench/harness/, tooling/, sim/).',
    },
    {
      from: 'lib',
      to: 'workflows',
      types: 'allowed',
      because:
        'clients start workflows by type name through lib/temporal/start/ and name signals and queries by lib/temporal/contracts/ (CONVENTIONS.md habit 14); use `import type` for the workflow function.',
    },
    {
      from: 'activities',
      to: 'workflows',
      because:
        'activities start or signal workflows through lib/temporal/start/, never by importing workflow code (CONVENTIONS.md habit 14).',
    },
  ],
  onlyAllow: [
    {
      from: 'workflows',
      packages: WORKFLOW_PACKAGES,
      files: WORKFLOW_PURE_FILES,
      because: 'workflow code must stay deterministic; use `import type` or add a pure module to WORKFLOW_PURE_FILES in eslint.config.js.',
    },
    {
      // The contracts are imported by workflow code, so they are held to the workflows' rule.
      from: 'lib/temporal/contracts',
      packages: WORKFLOW_PACKAGES,
      files: WORKFLOW_PURE_FILES,
      because: 'a contract is loaded into the deterministic workflow sandbox; keep it to definitions, types and pure modules.',
    },
    {
      // The operator texts (current details, timer summaries) are formatted inside workflow code.
      from: 'lib/temporal/details',
      packages: WORKFLOW_PACKAGES,
      files: WORKFLOW_PURE_FILES,
      because: 'the operator texts are formatted in the deterministic workflow sandbox; keep them pure.',
    },
    {
      // Its formatters serve the operator texts above.
      from: 'lib/zoneFormat',
      packages: WORKFLOW_PACKAGES,
      files: WORKFLOW_PURE_FILES,
      because: 'the operator texts are formatted in the deterministic workflow sandbox; keep them pure.',
    },
  ],
};

/** Temporal names written as strings (see the rule's comment below). */
const TEMPORAL_NAMES = [
  {
    selector:
      'CallExpression[callee.property.name=/^(start|execute|signalWithStart|signal|query)$/] > Literal.arguments:first-child[value=/^[a-z][A-Za-z0-9]*$/]',
    message: 'Temporal name as a string: use the workflow, signal or query contract in lib/temporal/contracts/.',
  },
  {
    selector: "Property[key.name='signal'] > Literal.value[value=/^[a-z][A-Za-z0-9]*$/]",
    message: 'Temporal signal name as a string: use the signal definition in lib/temporal/contracts/.',
  },
];

/**
 * A workspace condition written by hand (CONVENTIONS.md habit 15): every workspace table is read
 * and written through its model's `forWorkspace` / `visibleTo` / `knexForWorkspace`
 * (lib/models/scoped.ts), so the condition lives in one place and cannot be forgotten or written
 * differently. The service and its operator tooling are held to it; test/ and bench/ are not:
 * they look at the database from outside, often across workspaces (a soak counts its thousand
 * workspaces' rows at once, an attack test checks that another workspace's row is untouched).
 */
const WHERE_CALL = 'CallExpression[callee.property.name=/^(where|andWhere|orWhere|whereNot|whereIn|whereNotIn)$/]';
const WORKSPACE_COLUMN = '/(^|\\.)workspace_id$/';
const RAW_WORKSPACE_WHERE = [
  `${WHERE_CALL} > Literal.arguments:first-child[value=${WORKSPACE_COLUMN}]`,
  `${WHERE_CALL} > TemplateLiteral.arguments:first-child > TemplateElement.quasis:last-child[value.raw=${WORKSPACE_COLUMN}]`,
  `${WHERE_CALL} > ObjectExpression.arguments:first-child > Property[key.name='workspace_id']`,
  `${WHERE_CALL} > ObjectExpression.arguments:first-child > Property[key.value=${WORKSPACE_COLUMN}]`,
  'CallExpression[callee.property.name=/^(where|andWhere|orWhere)Raw$/] > Literal.arguments:first-child[value=/workspace_id/]',
].map((selector) => ({
  selector,
  message: "Workspace condition written by hand: read and write the table through its model's forWorkspace / visibleTo (lib/models).",
}));

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'eslint/typescript-api/',
      'tooling/openapi-typescript/',
      'client/schema.d.ts',
      '.data/',
      'bench/results/',
      'dist/',
      '.workflow-variant-*/',
    ],
  },
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: ['**/*.ts'] })),
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, sourceType: 'module' },
    plugins: { layers },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'layers/imports': ['error', layerRule],
      // A leading underscore marks a deliberately unused binding (an omitted rest sibling, a dialect argument).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Off for now: test bodies and a few adapters read untyped JSON as `any` (69 uses); tighten file by file.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Clients name workflows, signals and queries by their contracts (lib/temporal/contracts/),
    // never by strings, so a rename or a changed argument type fails the type check. (A
    // lower-case camelCase string is a Temporal name; SQL handed to a pg client is not.)
    files: ['**/*.ts'],
    ignores: ['test/unit/lint.test.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...TEMPORAL_NAMES],
    },
  },
  {
    // The service reaches workspace tables only through the models' scoped queries (habit 15).
    files: ['**/*.ts'],
    ignores: ['test/**', 'bench/**'],
    rules: {
      'no-restricted-syntax': ['error', ...TEMPORAL_NAMES, ...RAW_WORKSPACE_WHERE],
    },
  },
  {
    // CI forbids focused tests (CONVENTIONS.md habit 9): one `.only` silently skips the rest.
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...TEMPORAL_NAMES,
        {
          selector: "CallExpression > MemberExpression.callee[object.name=/^(it|describe|context|specify)$/][property.name='only']",
          message: 'Focused test (.only): it skips every other test in CI.',
        },
      ],
    },
  },
);
