import { config, serviceAddresses } from '../config';
import { renderQuoteCard } from './render';

// Where a generated image comes from (docs/media.md "Image generation"): an OpenAI-compatible
// images API (`POST {base}/images/generations`, b64_json) by a real HTTP client when a key is
// configured, else the built-in quote-card renderer. The caller imports the bytes into the
// media library like any other image.

export const IMAGE_STYLES = ['quote_card', 'photo', 'illustration', 'minimal'] as const;
export type ImageStyle = (typeof IMAGE_STYLES)[number];

/** What an IMAGE_GENERATION job row keeps of the request (the workflow reads it by job id). */
export interface ImageJobInput {
  postId?: string;
  prompt?: string;
  style: ImageStyle;
}

export interface ImageRequest {
  /** What to draw: the prompt, else the post's hook. */
  text: string;
  style: ImageStyle;
  projectId: string;
  projectName: string | null;
}

export interface GeneratedImage {
  bytes: Buffer;
  costCents: number;
  source: 'api' | 'builtin';
}

/** A failure of the images API; `retryable` tells the activity whether another attempt can help. */
export class ImageApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly retryable: boolean,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'ImageApiError';
  }
}

export interface ImageGenerator {
  generate(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage>;
}

const STYLE_HINTS: Record<ImageStyle, string> = {
  quote_card: 'a clean typographic quote card with the text large and legible',
  photo: 'a natural, editorial photograph',
  illustration: 'a flat, modern vector illustration',
  minimal: 'a minimal, abstract composition with generous empty space',
};

export class OpenAiImageGenerator implements ImageGenerator {
  constructor(
    private readonly opts: { baseUrl: string; apiKey?: string; model: string; size: string; timeoutMs: number; costCents: number },
  ) {}

  async generate(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage> {
    const url = `${this.opts.baseUrl.replace(/\/+$/, '')}/images/generations`;
    const prompt = `${STYLE_HINTS[req.style]} for a professional social network post: ${req.text}`.slice(0, 4000);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          ...(this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {}),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: this.opts.model, prompt, n: 1, size: this.opts.size, response_format: 'b64_json' }),
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(this.opts.timeoutMs)]) : AbortSignal.timeout(this.opts.timeoutMs),
        redirect: 'error',
      });
    } catch (err) {
      throw new ImageApiError('images_unreachable', `The images API did not answer: ${(err as Error).message}`, true, null);
    }
    const text = await res.text();
    if (!res.ok) {
      let code = `images_http_${res.status}`;
      try {
        code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? code;
      } catch {
        /* not JSON */
      }
      // 429 and 5xx may pass; a refused prompt or a bad key will not.
      throw new ImageApiError(code, `The images API answered ${res.status}.`, res.status === 429 || res.status >= 500, res.status);
    }
    let b64: unknown;
    try {
      b64 = (JSON.parse(text) as { data?: Array<{ b64_json?: unknown }> }).data?.[0]?.b64_json;
    } catch {
      /* handled below */
    }
    if (typeof b64 !== 'string' || b64 === '')
      throw new ImageApiError('images_invalid_response', 'The images API answered without an image.', true, res.status);
    return { bytes: Buffer.from(b64, 'base64'), costCents: this.opts.costCents, source: 'api' };
  }
}

export class BuiltinImageGenerator implements ImageGenerator {
  async generate(req: ImageRequest): Promise<GeneratedImage> {
    const bytes = await renderQuoteCard({ text: req.text, projectId: req.projectId, caption: req.projectName ?? undefined });
    return { bytes, costCents: config.images.builtinCostCents, source: 'builtin' };
  }
}

/** The generator for this process: the images API (serviceAddresses), or the built-in renderer when IMAGES_GENERATOR=builtin. */
export function createImageGenerator(): ImageGenerator {
  const i = config.images;
  const api = serviceAddresses().images;
  if (api)
    return new OpenAiImageGenerator({
      baseUrl: api.address,
      ...(i.apiKey ? { apiKey: i.apiKey } : {}),
      model: i.model,
      size: i.size,
      timeoutMs: i.timeoutMs,
      costCents: i.costCents,
    });
  return new BuiltinImageGenerator();
}
