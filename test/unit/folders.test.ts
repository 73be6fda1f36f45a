import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type TypeScript from '../../eslint/typescript-api/node_modules/typescript';

// No circle of value imports between the project's top-level folders (api/, lib/, activities/,
// workflows/, workers/, bin/, ...). eslint.config.js forbids the known wrong directions one by
// one; this reads every tracked source file with the compiler's parser and checks the whole
// folder graph, so a new folder or a new direction cannot close a circle unnoticed. Type-only
// imports vanish at run time and do not count; dynamic import() does.

const root = path.resolve(import.meta.dirname, '../..');
// The compiler the project type-checks with ships no JavaScript API; the linter's copy does
// (eslint/typescript-api).
const ts: typeof TypeScript = createRequire(path.join(root, 'eslint/typescript-api/package.json'))('typescript');

/** The relative modules a file imports as values. */
function valueImports(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: TypeScript.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly ||
        (clause !== undefined &&
          clause.name === undefined &&
          clause.namedBindings !== undefined &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((s) => s.startsWith('.'));
}

/** The folder a project-relative path lives in ('.' for the root's own files). */
const folderOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0]! : '.');

/** Edges 'from -> to' between top-level folders, each with one file that makes it. */
export function folderGraph(files: Array<{ path: string; text: string }>): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of files) {
    for (const specifier of valueImports(file.path, file.text)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file.path), specifier));
      // './activities' from a root file, '../activities' from workers/: the folder itself.
      const to = target.includes('/') ? folderOf(target) : target;
      const from = folderOf(file.path);
      if (from !== to && !edges.has(`${from} -> ${to}`)) edges.set(`${from} -> ${to}`, `${file.path} imports ${specifier}`);
    }
  }
  return edges;
}

/** Every edge that lies on a circle, with the file that makes it. */
export function circles(edges: Map<string, string>): string[] {
  const next = new Map<string, string[]>();
  for (const key of edges.keys()) {
    const [from, to] = key.split(' -> ') as [string, string];
    next.set(from, [...(next.get(from) ?? []), to]);
  }
  const reaches = (start: string, goal: string) => {
    const seen = new Set<string>();
    const stack = [start];
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (at === goal) return true;
      for (const to of next.get(at) ?? []) {
        if (seen.has(to)) continue;
        seen.add(to);
        stack.push(to);
      }
    }
    return false;
  };
  return [...edges].filter(([key]) => reaches(key.split(' -> ')[1]!, key.split(' -> ')[0]!)).map(([key, why]) => `${key}: ${why}`);
}

describe('folders: no circle of value imports between top-level folders', () => {
  it('finds a circle planted in three files, and ignores type-only and package imports', () => {
    const planted = folderGraph([
      { path: 'lib/a.ts', text: `import { b } from '../activities/b';\nimport type { C } from '../api/c';\nimport z from 'zod';` },
      { path: 'activities/b.ts', text: `export const b = () => import('../workflows/w');` },
      { path: 'workflows/w.ts', text: `export { a } from '../lib/a';` },
      { path: 'api/c.ts', text: `import { a } from '../lib/a';` },
    ]);
    assert.deepEqual([...planted.keys()].sort(), ['activities -> workflows', 'api -> lib', 'lib -> activities', 'workflows -> lib']);
    assert.deepEqual(
      circles(planted)
        .map((c) => c.split(':')[0])
        .sort(),
      ['activities -> workflows', 'lib -> activities', 'workflows -> lib'],
    );
  });

  it('the tree has none', () => {
    const tracked = execFileSync('git', ['ls-files', '-z', '--', '*.ts'], { cwd: root, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f !== '' && !f.startsWith('test/') && !f.endsWith('.d.ts'));
    const edges = folderGraph(tracked.map((f) => ({ path: f, text: readFileSync(path.join(root, f), 'utf8') })));
    // The graph is not trivially empty: the service's own layering shows in it.
    assert.ok(edges.has('api -> lib') && edges.has('workers -> activities'), [...edges.keys()].join(', '));
    assert.deepEqual(circles(edges), []);
  });
});
