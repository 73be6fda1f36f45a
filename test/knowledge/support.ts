import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

// A local web server for URL ingest tests: routes answer what the test sets, so a page can
// change between syncs, redirect, or be large.

export interface PageServer {
  url: string;
  hits: Map<string, number>;
  set(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  html(path: string, title: string, paragraphs: string[], lang?: string): void;
  close(): Promise<void>;
}

export function articleHtml(title: string, paragraphs: string[], lang = 'en'): string {
  return `<!doctype html><html lang="${lang}"><head><title>${title}</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/blog">Blog</a></nav>
<article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('\n')}</article>
<footer>Copyright Example Ltd. All rights reserved.</footer></body></html>`;
}

export async function startPageServer(): Promise<PageServer> {
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const hits = new Map<string, number>();
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const h = routes.get(path);
    if (!h) {
      res.writeHead(404).end('not found');
      return;
    }
    h(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    hits,
    set: (path, handler) => routes.set(path, handler),
    html(path, title, paragraphs, lang) {
      routes.set(path, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(articleHtml(title, paragraphs, lang));
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
