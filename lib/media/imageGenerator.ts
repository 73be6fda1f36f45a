import { config, serviceAddresses } from '../config';
import { HttpTransport, noAnswer, OutboundError, parseJson, statusVerdict, type TransportErrors } from '../outbound/outbound';
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
export class ImageApiError extends OutboundError {
  readonly service = 'images';
}

const IMAGE_ERRORS: TransportErrors = {
  ...noAnswer(ImageApiError, 'images API', { timeout: 'images_unreachable', unreachable: 'images_unreachable' }),
  // 408, 429 and 5xx may pass; a refused prompt, a bad key or a redirect will not.
  status: ({ status, text }) =>
    new ImageApiError(
      (parseJson(text) as { error?: { code?: string } } | undefined)?.error?.code ?? `images_http_${status}`,
      `The images API answered ${status}.`,
      statusVerdict(status),
    ),
};

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
  private readonly transport: HttpTransport;

  constructor(
    private readonly opts: { baseUrl: string; apiKey?: string; model: string; size: string; timeoutMs: number; costCents: number },
  ) {
    this.transport = new HttpTransport('images API', opts);
  }

  async generate(req: ImageRequest, signal?: AbortSignal): Promise<GeneratedImage> {
    const prompt = `${STYLE_HINTS[req.style]} for a professional social network post: ${req.text}`.slice(0, 4000);
    const { status, text } = await this.transport.send(
      {
        method: 'POST',
        path: 'images/generations',
        json: { model: this.opts.model, prompt, n: 1, size: this.opts.size, response_format: 'b64_json' },
        signal,
      },
      IMAGE_ERRORS,
    );
    const b64 = (parseJson(text) as { data?: Array<{ b64_json?: unknown }> } | undefined)?.data?.[0]?.b64_json;
    if (typeof b64 !== 'string' || b64 === '')
      throw new ImageApiError('images_invalid_response', 'The images API answered without an image.', {
        failure: 'bad_response',
        retryable: true,
        status,
      });
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
