// Topics and hooks of a source (spec 2.11: a finished source carries `topics[]` and `hooks[]`;
// docs/sources.md). Through the configured OpenAI-compatible chat-completions endpoint when
// there is one, else the built-in extractor, which needs no key and is deterministic (same text,
// same answer) so tests and replays can compare outputs. One provider call per `extract`;
// retries belong to the ingest activity, so failures are LlmErrors carrying `retryable` (and,
// when the provider billed the call anyway, its cost).

import { config, serviceAddresses } from '../config';
import { ChatEndpoint, computeCostCents, estimateTokens, readUsage, type Prices } from './client';
import { LlmError } from './errors';

export interface SourceInsights {
  topics: string[];
  hooks: string[];
}

/** The insights with what the call cost, in cents, as the post writer reports it (settled on the job). */
export interface PricedInsights extends SourceInsights {
  costCents: number;
}

export interface InsightExtractor {
  extract(input: { text: string; language: string | null }, opts?: { signal?: AbortSignal }): Promise<PricedInsights>;
}

/** Marks the request so the LLM simulator (sim/llm) answers it with the built-in insights. */
export const INSIGHTS_PROMPT_MARKER = 'Return the topics and hooks of the source as JSON.';

const STOP = new Set(
  (
    'the and for are but not you your with this that these those there their they them then than have has had was were will would ' +
    'can could should may might must our out who whom what when where which while why how all any each few more most other some such ' +
    'into from about over under again once only own same very just also its been being did does doing too off yet because until ' +
    'between through during before after above below here like make made get got one two three lot lots thing things really much ' +
    'many even well back still every want need know think going said says say i’m it’s don’t we’re you’re ' +
    'les des une est pas pour par sur dans avec qui que quoi ces ses son sont nous vous ils elles mais ont été être aux leur leurs plus ' +
    'comme tout tous cette sans chez très aussi der die das und ist nicht ein eine einen dem den des mit auf für von sich auch wie ' +
    'wir sie ihr sind war aber oder wenn noch nach bei aus zum zur über unter mehr sehr los las del por para con una uno que más ' +
    'pero sus como esta este está son fue het een van dat zijn voor met niet aan ook maar wel dan hun deze dit wat não nos nas dos ' +
    'das seu sua mais isso della delle degli dei per non che sono anche più questo questa nel nella'
  ).split(' '),
);
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

function sentencesOf(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n+|(?<=[.!?…])\s+/u)
    .map((s) =>
      s
        .replace(/^\s*(?:[-*•]|\d{1,2}[.)]|#{1,6})\s+/u, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((s) => /[\p{L}]/u.test(s));
}

/** Pure and synchronous: the built-in extractor, also what the LLM simulator answers. */
export function builtinInsights(
  text: string,
  limits = { topics: config.sources.maxTopics, hooks: config.sources.maxHooks },
): SourceInsights {
  const counts = new Map<string, { n: number; first: number; shown: string }>();
  let i = 0;
  for (const m of text.slice(0, 200_000).matchAll(WORD)) {
    const w = m[0];
    const key = w.toLowerCase();
    i++;
    if (key.length < 4 || STOP.has(key) || /^\d+$/.test(key)) continue;
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { n: 1, first: i, shown: key });
  }
  const ranked = [...counts.entries()].sort((a, b) => b[1].n - a[1].n || a[1].first - b[1].first);
  // A topic is a word the source comes back to; a one-off mention is not what it is about.
  const recurring = ranked.filter(([, c]) => c.n >= 2);
  const topics = (recurring.length > 0 ? recurring : ranked).slice(0, limits.topics).map(([, c]) => c.shown);

  const topicSet = new Set(topics);
  // A sentence said twice is one hook.
  const seen = new Set<string>();
  const scored = sentencesOf(text)
    .filter((s) => {
      const key = s.toLowerCase();
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((s, index) => {
      const words = (s.toLowerCase().match(WORD) ?? []) as string[];
      let score = new Set(words.filter((w) => topicSet.has(w))).size;
      if (s.endsWith('?')) score += 2;
      if (/\d/.test(s)) score += 1;
      return { s, index, score, len: s.length };
    })
    // A hook is a line someone would open a post with: a sentence, not a fragment or a paragraph.
    .filter((x) => x.len >= 20 && x.len <= 220);
  const hooks = scored
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, limits.hooks)
    .sort((a, b) => a.index - b.index)
    .map((x) => x.s);
  if (hooks.length === 0) {
    const first = sentencesOf(text)[0];
    if (first) hooks.push(first.length > 220 ? `${first.slice(0, 217).trimEnd()}…` : first);
  }
  return { topics, hooks };
}

export class BuiltinInsightExtractor implements InsightExtractor {
  async extract(input: { text: string }, opts: { signal?: AbortSignal } = {}): Promise<PricedInsights> {
    opts.signal?.throwIfAborted();
    // No model ran, so nothing was billed.
    return { ...builtinInsights(input.text), costCents: 0 };
  }
}

function strings(v: unknown, max: number, chars: number): string[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter((x): x is string => typeof x === 'string')
    .map((x) => x.replace(/\s+/g, ' ').trim().slice(0, chars))
    .filter((x) => x !== '')
    .slice(0, max);
}

/** Parses the model's JSON answer (bare, or in a ```json fence). */
export function parseInsights(content: string): SourceInsights {
  const body = content.replace(/^\s*```(?:json)?\s*/i, '').replace(/\s*```\s*$/, '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (err) {
    throw new LlmError('llm_invalid_response', 'The model did not answer with JSON topics and hooks.', { cause: err });
  }
  const o = (json ?? {}) as { topics?: unknown; hooks?: unknown };
  const result = { topics: strings(o.topics, config.sources.maxTopics, 80), hooks: strings(o.hooks, config.sources.maxHooks, 300) };
  if (result.topics.length === 0 && result.hooks.length === 0)
    throw new LlmError('llm_empty_output', 'The model found no topics or hooks.');
  return result;
}

export class ChatInsightExtractor implements InsightExtractor {
  private readonly chat: ChatEndpoint;
  constructor(private readonly opts: { baseUrl: string; apiKey?: string; model: string; timeoutMs: number; prices: Prices }) {
    this.chat = new ChatEndpoint(opts);
  }

  async extract(input: { text: string; language: string | null }, { signal }: { signal?: AbortSignal } = {}): Promise<PricedInsights> {
    const messages = [
      {
        role: 'system',
        content:
          `You read a source (a transcript or a document) for a person who writes social posts. ${INSIGHTS_PROMPT_MARKER} ` +
          `Answer only a JSON object {"topics": [...], "hooks": [...]}: up to ${config.sources.maxTopics} short topics (one to three words) ` +
          `and up to ${config.sources.maxHooks} hooks (a sentence each that could open a post), in the language of the source.`,
      },
      // Enough of the source to find its themes; the whole of a long recording would only cost more.
      { role: 'user', content: `Language: ${input.language ?? 'unknown'}\n\nSource:\n${input.text.slice(0, 24_000)}` },
    ];
    const { status, json } = await this.chat.post({ model: this.opts.model, messages }, signal);
    const content = (json as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0]?.message?.content;
    // Billing must never read zero because a provider left usage out; estimated as the writer does.
    const usage = readUsage(json) ?? {
      promptTokens: estimateTokens(messages.map((m) => m.content).join('\n')),
      completionTokens: estimateTokens(typeof content === 'string' ? content : ''),
    };
    const costCents = computeCostCents(usage, this.opts.prices);
    try {
      if (typeof content !== 'string') throw new LlmError('llm_invalid_response', 'LLM answer has no message content.', { status });
      return { ...parseInsights(content), costCents };
    } catch (err) {
      // The provider answered, so it billed the call even though no insights came out.
      if (err instanceof LlmError) throw err.withCost(costCents);
      throw err;
    }
  }
}

/** The extractor for this process: the LLM endpoint the writer uses, or the built-in one when LLM_WRITER=builtin. */
export function createInsightExtractor(): InsightExtractor {
  const llm = serviceAddresses().llm;
  if (!llm) return new BuiltinInsightExtractor();
  return new ChatInsightExtractor({
    baseUrl: llm.address,
    apiKey: config.llm.apiKey,
    model: config.llm.model,
    timeoutMs: config.llm.timeoutMs,
    prices: { priceInputPer1kTokens: config.llm.priceInputPer1kTokens, priceOutputPer1kTokens: config.llm.priceOutputPer1kTokens },
  });
}
