import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CATALOGUE } from '../../api/openapi/errors';
import { client, startApi, type TestServer } from '../support/app';
import { launchBrowser, type TestBrowser } from '../support/browser';

// issue 17: the reference page renders the OpenAPI document in a real browser with no network
// beyond the service itself, and the errors page carries one anchor per code, where every
// error's docs_url points (spec 7.1).

const OUT = path.join(process.cwd(), 'test-results', 'docs');

describe('/docs and /docs/errors in headless Chromium', function () {
  this.timeout(120_000);
  let api: TestServer;
  let browser: TestBrowser;
  before(async () => {
    api = await startApi();
    browser = await launchBrowser();
    await mkdir(OUT, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await api?.close();
  });

  it('renders the operations of the document, fetching nothing from outside the service', async () => {
    const page = await browser.context.newPage();
    const outside: string[] = [];
    await page.route('**/*', (r) => {
      const url = r.request().url();
      if (url.startsWith(api.url) || url.startsWith('data:') || url.startsWith('blob:')) return r.continue();
      outside.push(url);
      return r.abort();
    });
    const errorsSeen: string[] = [];
    page.on('pageerror', (e) => errorsSeen.push(e.message));
    await page.goto(`${api.url}/docs`);
    try {
      // The sidebar lists every tag of the document; opening one shows its operations.
      await page.getByText('Liveness, unauthenticated.').first().waitFor({ timeout: 30_000 });
      await page.goto(`${api.url}/docs#tag/posts`);
      await page.getByText('List the posts of a project, newest first.').first().waitFor({ timeout: 30_000 });
    } catch (err) {
      await page.screenshot({ path: path.join(OUT, 'reference-failed.png') });
      throw new Error(
        `${String(err)}\nblocked: ${outside.join(', ')}\npage errors: ${errorsSeen.join(' | ')}\n${(await page.locator('body').innerText()).slice(0, 1000)}`,
      );
    }
    const text = await page.locator('body').innerText();
    for (const tag of ['workspaces', 'projects', 'notes', 'posts', 'jobs', 'usage', 'webhookEndpoints'])
      assert.ok(text.includes(tag), `the page lists ${tag}`);
    assert.ok(text.includes('Create a draft, or a scheduled post when scheduledFor is in the future.'));
    assert.match(text, /\/v1\/posts/);
    await page.screenshot({ path: path.join(OUT, 'reference.png'), fullPage: false });
    assert.deepEqual(outside, [], 'the page works offline');
    assert.deepEqual(errorsSeen, []);
    await page.close();
  });

  it('the errors page has one anchor per code, and an error docs_url lands on it', async () => {
    const res = await client(api.url)('GET', '/v1/posts');
    assert.equal(res.status, 401);
    const docsUrl: string = res.body.error.docs_url;
    assert.equal(new URL(docsUrl).pathname, '/docs/errors');
    assert.equal(new URL(docsUrl).hash, `#${res.body.error.code}`);
    const page = await browser.context.newPage();
    // docs_url is built from PUBLIC_URL; open the same page and anchor on this test server.
    await page.goto(`${api.url}/docs/errors${new URL(docsUrl).hash}`);
    for (const { code, status } of ERROR_CATALOGUE) {
      const section = page.locator(`section[id="${code}"]`);
      assert.equal(await section.count(), 1, code);
      assert.match(await section.innerText(), new RegExp(`${code}[\\s\\S]*HTTP ${status}`));
    }
    assert.equal(await page.evaluate('location.hash'), `#${res.body.error.code}`);
    await page.screenshot({ path: path.join(OUT, 'errors.png') });
    await page.close();
  });
});
