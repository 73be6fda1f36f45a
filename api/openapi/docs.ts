import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import Router from '@koa/router';
import type { Context } from 'koa';
import { ERROR_CATALOGUE } from './errors';

// The service's own reference (issue 17): /docs renders /v1/openapi.json with the Scalar API
// reference, whose standalone bundle ships inside its npm package and is served from here, so
// the page works with no network; /docs/errors is the page every error's docs_url points at
// (spec 7.1), one anchor per code of spec 7.2.

const require = createRequire(import.meta.url);
const SCALAR_BUNDLE = require.resolve('@scalar/api-reference/browser/standalone.js');

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** Inline code spans of the catalogue's prose. */
const prose = (s: string) => escape(s).replace(/`([^`]+)`/g, '<code>$1</code>');

const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Content Scheduling Service API reference</title>
</head>
<body>
<div id="app"></div>
<script src="/docs/assets/scalar.js"></script>
<script>
  // Offline: no web fonts, no hosted client, no AI agent or registry, the document from this origin.
  Scalar.createApiReference('#app', {
    url: '/v1/openapi.json',
    withDefaultFonts: false,
    hideClientButton: true,
    telemetry: false,
    agent: { disabled: true },
    showDeveloperTools: 'never',
    metaData: { title: 'Content Scheduling Service API reference' },
  });
</script>
</body>
</html>
`;

function errorsPage(): string {
  const rows = ERROR_CATALOGUE.map(
    (e) => `<section id="${e.code}" class="code">
  <h2><a href="#${e.code}"><code>${e.code}</code></a> <span class="status">HTTP ${e.status}</span></h2>
  <p>${prose(e.when)}</p>
</section>`,
  ).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Errors · Content Scheduling Service API</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1d1d1f; }
  code { font-family: ui-monospace, monospace; background: #f2f2f5; padding: 0 .25em; border-radius: 3px; }
  section.code { border-top: 1px solid #ddd; padding: .5rem 0; }
  section.code:target { background: #fff8db; }
  h2 { font-size: 1.1rem; margin: .5rem 0; } h2 a { color: inherit; text-decoration: none; }
  .status { color: #666; font-weight: normal; font-size: .9rem; margin-left: .5rem; }
</style>
</head>
<body>
<h1>Errors</h1>
<p>Every error is <code>{ "error": { "code", "message", "request_id", "docs_url", "details"? } }</code>.
Branch on <code>code</code>; the message is prose and may change. Quote <code>request_id</code> to support.
<code>details</code> varies by code. See also the <a href="/docs">API reference</a>.</p>
${rows}
</body>
</html>
`;
}

export function docsRouter(): Router {
  const r = new Router();
  const page = (html: () => string) => (ctx: Context) => {
    ctx.state.handled = true;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = html();
  };
  const errorsHtml = errorsPage();
  r.get(
    '/docs',
    page(() => REFERENCE_PAGE),
  );
  r.get(
    '/docs/errors',
    page(() => errorsHtml),
  );
  r.get('/docs/assets/scalar.js', (ctx: Context) => {
    ctx.state.handled = true;
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = createReadStream(SCALAR_BUNDLE);
  });
  return r;
}
