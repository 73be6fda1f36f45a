// The post writer used by generation jobs: an OpenAI-compatible chat-completions client, or the
// offline built-in writer when no LLM endpoint is configured.
//
// The writer makes exactly one provider call per `write`. Retries belong to the caller (the
// generation activity, under Temporal's retry policy), which is why every failure is an
// LlmError carrying `retryable`: retrying inside here as well would multiply attempts and spend.

import { config, serviceAddresses } from '../config';
import { HttpTransport, noAnswer, parseJson, type TransportErrors } from '../outbound/outbound';
import { BuiltinWriter } from './builtin';
import { classifyProviderFailure, errorFromHttpResponse, LlmError } from './errors';
import { buildMessages, dropUnfinishedTail, normalizePostText, type GenerationInput } from './prompts';
import { deriveTitle } from './title';

export { BuiltinWriter } from './builtin';
export type { ContentType, GenerationInput } from './prompts';

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface WriteOptions {
  /** Aborting rejects `write` with the signal's reason (not an LlmError): it is a cancellation. */
  signal?: AbortSignal;
  onProgress?: (fraction: number, message: string) => void;
}

export interface WriteResult {
  content: string;
  title: string;
  usage: TokenUsage;
  costCents: number;
  model: string;
}

export interface PostWriter {
  write(input: GenerationInput, opts?: WriteOptions): Promise<WriteResult>;
}

export interface Prices {
  /** Hundredths of a cent per 1,000 prompt tokens. */
  priceInputPer1kTokens: number;
  /** Hundredths of a cent per 1,000 completion tokens. */
  priceOutputPer1kTokens: number;
}

export interface ChatCompletionsWriterOptions extends Prices {
  /** Includes the version path, as in OpenAI's SDK: `https://api.openai.com/v1`. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs: number;
}

/**
 * Whole cents, rounded up: spend is reconciled against a cap, and rounding down would let many
 * small calls through for free. Any call that used tokens costs at least a cent.
 */
export function computeCostCents(usage: TokenUsage, prices: Prices): number {
  if (usage.promptTokens + usage.completionTokens <= 0) return 0;
  // Hundredths of a cent per 1,000 tokens: 100,000 of these units make one cent.
  const units = usage.promptTokens * prices.priceInputPer1kTokens + usage.completionTokens * prices.priceOutputPer1kTokens;
  return Math.max(1, Math.ceil(units / 100_000));
}

/** The transport's failures as LlmErrors; the provider's own answers are classified by lib/llm/errors.ts. */
const LLM_ERRORS: TransportErrors = {
  ...noAnswer(LlmError, 'LLM endpoint', { timeout: 'llm_timeout', unreachable: 'llm_unavailable' }),
  status: ({ status, headers, text }) =>
    status < 400
      ? // A configuration mistake (wrong scheme or path); retrying cannot fix it.
        new LlmError(
          'llm_bad_request',
          `LLM endpoint redirected (HTTP ${status}) to ${headers.get('location') ?? 'an unknown location'}; point LLM_BASE_URL at the final address.`,
          { status },
        )
      : errorFromHttpResponse(status, text, headers),
};

/** The chat-completions endpoint of an OpenAI-compatible provider, shared by the post writer and the insight extractor. */
export class ChatEndpoint {
  private readonly transport: HttpTransport;

  constructor(opts: { baseUrl: string; apiKey?: string; timeoutMs: number }) {
    this.transport = new HttpTransport('LLM', opts);
  }

  /** One call; aborting `signal` rejects with its reason (not an LlmError): it is a cancellation. */
  async post(body: unknown, signal?: AbortSignal): Promise<{ status: number; json: unknown }> {
    const { status, text } = await this.transport.send({ method: 'POST', path: 'chat/completions', json: body, signal }, LLM_ERRORS);
    const json = parseJson(text);
    if (json === undefined)
      throw new LlmError('llm_invalid_response', `LLM answered HTTP ${status} with a body that is not JSON.`, { status });
    return { status, json };
  }
}

export class ChatCompletionsWriter implements PostWriter {
  private readonly chat: ChatEndpoint;
  private readonly model: string;
  private readonly prices: Prices;

  constructor(opts: ChatCompletionsWriterOptions) {
    this.chat = new ChatEndpoint(opts);
    this.model = opts.model;
    this.prices = { priceInputPer1kTokens: opts.priceInputPer1kTokens, priceOutputPer1kTokens: opts.priceOutputPer1kTokens };
  }

  async write(input: GenerationInput, opts: WriteOptions = {}): Promise<WriteResult> {
    const progress = opts.onProgress ?? (() => {});
    opts.signal?.throwIfAborted();
    if (input.sourceText.trim() === '') throw new LlmError('llm_bad_request', 'The source text is empty.');

    progress(0.05, 'Preparing the prompt');
    const messages = buildMessages(input);
    // Neither temperature nor a token cap: reasoning models reject both (or want other names
    // for them), and the prompt plus normalizePostText already bound the length.
    const body = { model: this.model, messages };

    progress(0.1, 'Waiting for the model');
    const { status, json } = await this.chat.post(body, opts.signal);

    progress(0.9, 'Formatting the post');
    const reportedUsage = readUsage(json);
    let answer: Answer;
    let content: string;
    try {
      answer = readAnswer(status, json);
      content = normalizePostText(answer.truncated ? dropUnfinishedTail(answer.text) : answer.text);
      if (content === '') throw new LlmError('llm_empty_output', 'The model answered with no usable text.', { status });
    } catch (err) {
      // The provider answered, so it may have billed the call even though no post came out.
      if (err instanceof LlmError && reportedUsage) throw err.withCost(computeCostCents(reportedUsage, this.prices));
      throw err;
    }
    // Billing must never read zero because a provider left usage out; estimate instead.
    const usage = reportedUsage ?? {
      promptTokens: estimateTokens(messages.map((m) => m.content).join('\n')),
      completionTokens: estimateTokens(answer.text),
    };
    const result: WriteResult = {
      content,
      title: deriveTitle(content),
      usage,
      costCents: computeCostCents(usage, this.prices),
      model: answer.model ?? this.model,
    };
    progress(1, 'Done');
    return result;
  }
}

interface Answer {
  text: string;
  truncated: boolean;
  model: string | null;
}

function readAnswer(status: number, json: unknown): Answer {
  const invalid = (why: string) => new LlmError('llm_invalid_response', `LLM response ${why}.`, { status });
  if (!isRecord(json)) throw invalid('is not a JSON object');
  const choices = json.choices;
  if (!Array.isArray(choices)) {
    // Some gateways report upstream failures inside a 200 body.
    if ('error' in json) throw classifyProviderFailure(null, json);
    throw invalid('has no choices');
  }
  // An empty list is how some platforms answer a prompt their filter blocked.
  if (choices.length === 0) throw new LlmError('llm_empty_output', 'The model returned no choices.', { status });
  const choice = choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) throw invalid('has no message');
  const finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  if (finish === 'content_filter') {
    throw new LlmError('llm_empty_output', 'The provider filtered the output.', { status, providerCode: 'content_filter' });
  }
  const message = choice.message;
  if (typeof message.refusal === 'string' && message.refusal.trim() !== '') {
    throw new LlmError('llm_empty_output', 'The model refused to write the post.', { status, providerCode: 'refusal' });
  }
  const content = message.content;
  let text: string;
  if (content === null || content === undefined) text = '';
  else if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    // Content-part arrays: some compatible servers answer in the multimodal shape.
    text = content.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
  } else throw invalid('has a message content of an unexpected type');
  if (text.trim() === '') throw new LlmError('llm_empty_output', 'The model returned empty content.', { status });
  return { text, truncated: finish === 'length', model: typeof json.model === 'string' && json.model ? json.model : null };
}

/** The provider's token counts, when it reported them. */
export function readUsage(json: unknown): TokenUsage | null {
  if (!isRecord(json) || !isRecord(json.usage)) return null;
  const p = json.usage.prompt_tokens;
  const c = json.usage.completion_tokens;
  if (!isCount(p) || !isCount(c)) return null;
  return { promptTokens: p, completionTokens: c };
}

// About four characters per token in English. Crude, and used only when the provider leaves
// usage out, where a rough charge is better than none.
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function isCount(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The writer for this process: the LLM endpoint (LLM_BASE_URL, else the local simulator), or the offline writer when LLM_WRITER=builtin. */
export function createPostWriter(): PostWriter {
  const llm = serviceAddresses().llm;
  if (!llm) return new BuiltinWriter();
  return new ChatCompletionsWriter({
    baseUrl: llm.address,
    apiKey: config.llm.apiKey,
    model: config.llm.model,
    timeoutMs: config.llm.timeoutMs,
    priceInputPer1kTokens: config.llm.priceInputPer1kTokens,
    priceOutputPer1kTokens: config.llm.priceOutputPer1kTokens,
  });
}
