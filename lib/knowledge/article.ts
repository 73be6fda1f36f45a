import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

// The readable article of a fetched page (docs/knowledge.md "URL ingest"): Mozilla's Readability
// over a linkedom DOM. Plain-text pages are taken as they are.

// linkedom's DOM, as far as this module uses it (the project compiles without the DOM library).
interface El {
  textContent: string | null;
  parentElement: El | null;
  getAttribute(name: string): string | null;
  closest(selector: string): El | null;
  querySelector(selector: string): El | null;
  querySelectorAll(selector: string): Iterable<El>;
  remove(): void;
}
interface Doc extends El {
  documentElement: El | null;
  body: El | null;
}
const parse = (html: string): Doc => (parseHTML(html) as unknown as { document: Doc }).document;

export interface Article {
  title: string | null;
  text: string;
  language: string | null;
  siteName: string | null;
}

export function extractArticle(body: Buffer, contentType: string): Article {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().toLowerCase();
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(charset || 'utf-8');
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  const raw = decoder.decode(body);
  if (type === 'text/plain' || type === 'text/markdown') return { title: null, text: raw, language: null, siteName: null };
  const document = parse(raw);
  const lang = document.documentElement?.getAttribute('lang') || null;
  const pageTitle = document.querySelector('title')?.textContent?.trim() || null;
  let article: ReturnType<Readability['parse']> = null;
  try {
    article = new Readability(document as never, { charThreshold: 100 }).parse();
  } catch {
    article = null;
  }
  if (article?.content && article.textContent?.trim()) {
    return {
      title: article.title?.trim() || pageTitle,
      text: blocksText(article.content) || article.textContent,
      language: article.lang || lang,
      siteName: article.siteName ?? null,
    };
  }
  // Too little for Readability: the body's text is still the page's text.
  const again = parse(raw);
  for (const el of again.querySelectorAll('script, style, noscript, template')) el.remove();
  return { title: pageTitle, text: again.body?.textContent ?? '', language: lang, siteName: null };
}

/** The article's paragraphs, headings and list items, one block per paragraph. */
function blocksText(html: string): string {
  const document = parse(`<!doctype html><html><body>${html}</body></html>`);
  const blocks = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, p, li, blockquote, pre')].filter(
    (el) => !el.parentElement?.closest('p, li, blockquote, pre'),
  );
  return blocks
    .map((el) => (el.textContent ?? '').replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n\n');
}
