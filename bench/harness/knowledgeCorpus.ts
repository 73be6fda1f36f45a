import { prng } from './content';

// The knowledge benches' corpus (bench/knowledge.ts, bench/mcp.ts) and its queries: a
// long-tailed vocabulary, so queries match some chunks and not others; seeded, so runs agree.

const rand = prng(42);
const COMMON = 'team customers release product launch pricing support process design meeting feedback growth hiring'.split(' ');
const RARE = Array.from({ length: 3000 }, (_, i) => `term${i.toString(36)}`);
const FILLER = 'the and of to in that it for with this we our is are was on as at by from'.split(' ');

const pick = (words: readonly string[]) => words[Math.floor(rand() * words.length)]!;

function sentence(): string {
  const s = Array.from({ length: 10 + Math.floor(rand() * 12) }, () => {
    const r = rand();
    return pick(r < 0.45 ? FILLER : r < 0.8 ? COMMON : RARE);
  }).join(' ');
  return `${s[0]!.toUpperCase()}${s.slice(1)}.`;
}

/** A document of about `bytes` characters: paragraphs of sentences over the vocabulary. */
export function documentText(bytes: number): string {
  const paras: string[] = [];
  let size = 0;
  while (size < bytes) {
    const p = Array.from({ length: 4 + Math.floor(rand() * 4) }, sentence).join(' ');
    paras.push(p);
    size += p.length + 2;
  }
  return paras.join('\n\n').slice(0, bytes);
}

/** Search queries over the corpus: a common and a rare word, a rare word, a quoted phrase. */
export const QUERIES = Array.from({ length: 64 }, (_, i) =>
  i % 3 === 0
    ? `${COMMON[i % COMMON.length]} ${RARE[i * 37]}`
    : i % 3 === 1
      ? RARE[i * 41]!
      : `"${COMMON[i % COMMON.length]} ${COMMON[(i + 1) % COMMON.length]}"`,
);

/**
 * Stores documents of `bytes` characters in a project until the workspace holds at least `want`
 * chunks, as a finished ingest stores them (storeDocument, with its DONE job row). Returns the
 * workspace's chunk count. Imported only after the bench has set its environment.
 */
export async function storeDocumentsUpTo(
  workspaceId: string,
  projectId: string,
  have: number,
  want: number,
  bytes: number,
): Promise<number> {
  const { db } = await import('../../lib/db');
  const { storeDocument } = await import('../../lib/knowledge/ingest');
  const { newId } = await import('../../lib/ids');
  let total = have;
  while (total < want) {
    const jobId = newId('job');
    await db()('jobs').insert({ id: jobId, workspace_id: workspaceId, project_id: projectId, type: 'KNOWLEDGE_INGEST', status: 'DONE' });
    const r = await storeDocument(
      db(),
      { id: jobId, workspace_id: workspaceId },
      { type: 'text', scope: 'PROJECT', projectId, tags: [], language: 'en' },
      { text: documentText(bytes), name: 'seed', sourceName: null, sourceUrl: null, language: 'en' },
    );
    total += r.chunkCount;
  }
  return total;
}
