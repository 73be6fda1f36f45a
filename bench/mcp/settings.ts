import path from 'node:path';
import { benchFlags } from '../harness/options';
import { setBenchEnvironment } from '../harness/database';
import { RESULTS_DIR } from '../harness/format';

// The MCP bench's command line and environment, set before the first app module loads (they read it once).

export const DATABASE_URL = process.env.BENCH_MCP_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/content_scheduler_bench_mcp';
export const REDIS_URL = process.env.BENCH_MCP_REDIS_URL ?? 'redis://127.0.0.1:6379/12';

export type Kind = 'rest' | 'plain' | 'streamable' | 'sse';
export const KINDS: readonly Kind[] = ['rest', 'plain', 'streamable', 'sse'];
export type McpKind = Exclude<Kind, 'rest'>;

export const opt = benchFlags(
  'mcp: every read tool with a REST twin, MCP sessions against REST connections, interleaved.',
  {
    sessions: { default: 16, min: 1, integer: true, help: 'concurrent sessions (and REST connections)' },
    duration: { default: 1, min: 0.5, arg: 'S', help: 'seconds per measured round' },
    rounds: { default: 6, min: 1, integer: true, help: 'measured rounds per kind and tool, alternating' },
    warmup: { default: 1, arg: 'S', help: 'seconds of warm-up per kind and tool before its measured rounds' },
    tools: { type: 'string', arg: 'A,B', help: 'the tools to drive (default: every read tool with a REST twin)' },
    kinds: {
      default: 'rest,plain',
      arg: 'K,…',
      help: 'rest, plain, streamable, sse (default rest,plain); the ratio needs rest',
    },
    chunks: { default: 10000, integer: true, help: 'chunks in the knowledge corpus the search runs over' },
    strict: { type: 'boolean', help: "exit 1 when a tool's plain MCP calls/s miss 0.8× its REST twin's" },
    profile: {
      type: 'boolean',
      help: 'run the server with the V8 CPU profiler and print where its time went\n(the profile covers the whole run: narrow it with --tools and --kinds)',
    },
  },
  `Environment: BENCH_MCP_DATABASE_URL (default ${DATABASE_URL}, dropped and recreated),
             BENCH_MCP_REDIS_URL (default ${REDIS_URL}, flushed).`,
);
export const DURATION_MS = opt.duration * 1000;
export const WARMUP_MS = opt.warmup * 1000;
export const RUN_KINDS = opt.kinds.split(',').map((k) => k.trim()) as Kind[];
for (const k of RUN_KINDS) if (!KINDS.includes(k)) throw new Error(`--kinds: ${k} is not one of ${KINDS.join(', ')}`);
export const MCP_KINDS = RUN_KINDS.filter((k): k is McpKind => k !== 'rest');
/** A tool's plain MCP calls/s ≥ this × its REST twin's. */
export const TARGET_RATIO = 0.8;
export const PROFILE_DIR = path.join(RESULTS_DIR, 'profiles', 'mcp');

// The app modules read these once, at import.
setBenchEnvironment(DATABASE_URL, REDIS_URL, { LOG_LEVEL: 'error', LLM_WRITER: 'builtin' });
