// Import boundaries between the project's folders (issue 11 section 4; CONVENTIONS.md habit 7):
// a relative import is resolved against the importing file, so `../../api/x` from lib/a/b.ts and
// `../api/x` from lib/a.ts are the same violation. A forbidden direction covers type-only imports
// too (issue 38 section 1): a type borrowed from a layer above ties the one below to it as surely
// as a value does. A rule lets types through only when it says so (`types: 'allowed'`): a client
// starts a workflow by name typed with the workflow function (CONVENTIONS.md habit 14), and the
// deterministic sandbox's allow-lists are about values at run time, so they never count types.
import path from 'node:path';

const isTypeOnly = (node) =>
  node.importKind === 'type' ||
  node.exportKind === 'type' ||
  (node.type === 'ImportDeclaration' && node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'));

const within = (rel, dir) => rel === dir || rel.startsWith(`${dir}/`);

/** The module an import names, as a project-relative path ('lib/db') or the package name. */
function target(source, filename, root) {
  if (!source.startsWith('.')) return { kind: 'package', name: source };
  const abs = path.resolve(path.dirname(filename), source);
  return {
    kind: 'file',
    name: path
      .relative(root, abs)
      .split(path.sep)
      .join('/')
      .replace(/\.[cm]?[jt]s$/, ''),
  };
}

/** @type {import('eslint').Rule.RuleModule} */
export const layerImports = {
  meta: {
    type: 'problem',
    docs: { description: 'Enforces which folders may import which (lib/ below api/, workflows/ deterministic).' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          forbid: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                from: { type: 'string' },
                to: { type: 'string' },
                because: { type: 'string' },
                types: { enum: ['checked', 'allowed'] },
              },
              required: ['from', 'to', 'because'],
              additionalProperties: false,
            },
          },
          onlyAllow: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                from: { type: 'string' },
                packages: { type: 'array', items: { type: 'string' } },
                files: { type: 'array', items: { type: 'string' } },
                because: { type: 'string' },
              },
              required: ['from', 'packages', 'files', 'because'],
              additionalProperties: false,
            },
          },
        },
        required: ['root'],
        additionalProperties: false,
      },
    ],
    messages: {
      forbidden: '{{from}}/ must not import {{to}}/ ({{name}}): {{because}}',
      notAllowed: '{{from}}/ may import only {{allowed}} (and types); not {{name}}: {{because}}',
    },
  },
  create(context) {
    const { root, forbid = [], onlyAllow = [] } = context.options[0];
    const file = path.relative(root, context.filename).split(path.sep).join('/');
    const forbids = forbid.filter((r) => within(file, r.from));
    const allowLists = onlyAllow.filter((r) => within(file, r.from));
    if (!forbids.length && !allowLists.length) return {};

    function check(node, sourceNode) {
      if (!sourceNode || typeof sourceNode.value !== 'string') return;
      const t = target(sourceNode.value, context.filename, root);
      const typeOnly = isTypeOnly(node);
      for (const r of forbids) {
        if (typeOnly && r.types === 'allowed') continue;
        if (t.kind === 'file' && within(t.name, r.to)) {
          context.report({
            node: sourceNode,
            messageId: 'forbidden',
            data: { from: r.from, to: r.to, name: sourceNode.value, because: r.because },
          });
        }
      }
      if (typeOnly) return;
      for (const r of allowLists) {
        const ok = t.kind === 'package' ? r.packages.includes(t.name) : within(t.name, r.from) || r.files.some((f) => within(t.name, f));
        if (!ok) {
          const allowed = [...r.packages, `${r.from}/`, ...r.files].join(', ');
          context.report({
            node: sourceNode,
            messageId: 'notAllowed',
            data: { from: r.from, allowed, name: sourceNode.value, because: r.because },
          });
        }
      }
    }

    return {
      ImportDeclaration: (node) => check(node, node.source),
      ExportNamedDeclaration: (node) => check(node, node.source),
      ExportAllDeclaration: (node) => check(node, node.source),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source : null),
    };
  },
};

export default { meta: { name: 'layers' }, rules: { imports: layerImports } };
