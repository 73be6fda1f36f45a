// `npm run lint` (after the type check): the project's own rules that a compiler cannot see.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const problems: string[] = [];

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

for (const file of walk(root)) {
  const rel = path.relative(root, file);
  const text = readFileSync(file, 'utf8');
  // CI forbids focused tests (CONVENTIONS.md habit 9).
  if (rel.startsWith('test/') && /\b(it|describe|context)\.only\(/.test(text)) problems.push(`${rel}: focused test (.only)`);
  // Clients name workflows, signals and queries by the definitions the workflow files export,
  // never by strings, so a rename or a changed argument type fails the type check.
  for (const m of text.matchAll(/\.(?:workflow\.(?:start|execute|signalWithStart)|signal|query)(?:<[^>]*>)?\(\s*'([A-Za-z]+)'|\bsignal: '([A-Za-z]+)'/g)) {
    // (An all-capitals string is SQL handed to a pg client's query(), not a Temporal name.)
    if (!/^[A-Z]+$/.test(m[1] ?? m[2] ?? '')) problems.push(`${rel}: Temporal name as a string (${m[0]}); use the definition from workflows/`);
  }
  // Workflow code is deterministic orchestration: nothing from Node, the db or the API.
  if (rel.startsWith('workflows/')) {
    for (const m of text.matchAll(/^import (?!type)[^;]*from '([^']+)'/gm)) {
      const from = m[1]!;
      if (from.startsWith('node:') || /\/(api\/|lib\/(db|redis|config|temporal|crypto)\b)/.test(from) || ['knex', 'pg', 'ioredis', 'koa'].includes(from)) problems.push(`${rel}: workflow imports ${from}`);
    }
  }
}

if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('lint: ok');
