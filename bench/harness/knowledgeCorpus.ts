import { prng } from './content';

// The knowledge benches' corpus (bench/knowledge.ts, bench/mcp.ts) and its queries: a long-tailed
// vocabulary, so queries match some chunks and not others; seeded, so runs agree.

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
  for (let size = 0; size < bytes; size += paras.at(-1)!.length + 2)
    paras.push(Array.from({ length: 4 + Math.floor(rand() * 4) }, sentence).join(' '));
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

/** The workspace's chunks. */
export async function chunksOf(workspaceId: string): Promise<number> {
  const { db } = await import('../../lib/db');
  return Number((await db()('knowledge_chunks').where({ workspace_id: workspaceId }).count<{ n: string }[]>('* as n'))[0]!.n);
}

/**
 * Documents of `bytes` characters stored in a project until the workspace holds `want` chunks: the
 * first 10,000 chunks as a finished ingest stores them (storeDocument, with its DONE job row), past
 * that (`copy`) documents copied with their chunks in SQL, then both tables analyzed. Returns the workspace's chunk count.
 */
export async function growCorpus(workspaceId: string, projectId: string, have: number, want: number, bytes: number, copy = false) {
  const { db } = await import('../../lib/db');
  const { storeDocument } = await import('../../lib/knowledge/ingest');
  const { newId } = await import('../../lib/ids');
  let total = have;
  while (total < (copy ? Math.min(want, 10_000) : want)) {
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
  const cols = Object.keys(await db()('knowledge_documents').columnInfo());
  const list = cols.map((c) => `"${c}"`).join(', ');
  for (let round = 0; total < want; round++) {
    const select = cols.map((c) => (c === 'id' ? `id || '_c${round}'` : c === 'job_id' ? 'null' : `"${c}"`)).join(', ');
    const avg = await db().raw('select avg(chunk_count) as n from knowledge_documents where workspace_id = ?', [workspaceId]);
    const sql = `select id from knowledge_documents where workspace_id = ? and id !~ '_c[0-9]+$' order by id limit ?`;
    const originals = (await db().raw(sql, [workspaceId, Math.ceil((want - total) / Number(avg.rows[0].n))])).rows.map(
      (r: { id: string }) => r.id,
    );
    await db().transaction(async (trx) => {
      await trx.raw(`insert into knowledge_documents (${list}) select ${select} from knowledge_documents where id = any(?)`, [originals]);
      await trx.raw(
        `insert into knowledge_chunks (document_id, workspace_id, ordinal, content, tsv)
         select c.document_id || '_c${round}', c.workspace_id, c.ordinal, c.content, c.tsv from knowledge_chunks c where c.document_id = any(?)`,
        [originals],
      );
    });
    total = await chunksOf(workspaceId);
  }
  await db().raw('analyze knowledge_chunks, knowledge_documents');
  return total;
}
