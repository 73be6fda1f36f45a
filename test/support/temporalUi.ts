import type { BrowserContext, Page } from 'playwright-core';
import { SEARCH } from '../../lib/searchAttributes';
import { PUBLISH_POST } from '../../lib/temporal/contracts/publishPost';

// An operator's walk through the Temporal UI (docs/operations.md "What the workflows show"), in
// the real browser: the workflow list filtered by a post's `PostId` search attribute, its
// publish workflow opened from the list, and its User Metadata tab read. Shared by the browser
// test against the tests' dev server and by `npm run cluster:smoke` against the cluster's UI.

/** The text of the page and of its frames: the UI renders metadata markdown in sandboxed iframes. */
async function allText(page: Page): Promise<string> {
  const parts: string[] = [];
  for (const frame of page.frames())
    parts.push(
      await frame
        .locator('body')
        .innerText({ timeout: 5_000 })
        .catch(() => ''),
    );
  return parts.join('\n');
}

async function until(page: Page, what: string, ok: (text: string) => boolean, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await allText(page);
    if (ok(text)) return text;
    if (Date.now() > deadline)
      throw new Error(`the Temporal UI did not show ${what} within ${timeoutMs / 1000} s; it showed:\n${text.slice(0, 2_000)}`);
    await page.waitForTimeout(250);
  }
}

export interface PostWorkflowInUi {
  /** The list page's text, filtered by the post id. */
  list: string;
  /** The User Metadata tab: summary, details, current details, timers with summaries. */
  metadata: string;
  page: Page;
}

/**
 * Finds the publish workflow of `postId` by its search attribute, opens it and its User Metadata
 * tab, and waits until the tab shows `expect` (each string). The list is reloaded until the
 * workflow appears: visibility records follow the start by up to a second or so.
 */
export async function findPostWorkflowInUi(
  context: BrowserContext,
  opts: { uiUrl: string; namespace: string; postId: string; expect: string[]; timeoutMs?: number },
): Promise<PostWorkflowInUi> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const workflowId = PUBLISH_POST.id(opts.postId);
  const page = await context.newPage();
  const query = `${SEARCH.post.name}="${opts.postId}"`;
  const listUrl = `${opts.uiUrl}/namespaces/${encodeURIComponent(opts.namespace)}/workflows?query=${encodeURIComponent(query)}`;
  const deadline = Date.now() + timeoutMs;
  const link = page.getByRole('link', { name: workflowId, exact: true });
  for (;;) {
    await page.goto(listUrl);
    try {
      await link.first().waitFor({ timeout: 5_000 });
      break;
    } catch (err) {
      if (Date.now() > deadline)
        throw new Error(`workflow ${workflowId} not listed for ${query}: ${String(err)}\n${(await allText(page)).slice(0, 2_000)}`);
    }
  }
  const list = await allText(page);
  await link.first().click();
  await page
    .getByRole('link', { name: 'User Metadata' })
    .or(page.getByText('User Metadata', { exact: true }))
    .first()
    .click();
  const metadata = await until(
    page,
    opts.expect.join(' and '),
    (text) => opts.expect.every((e) => text.includes(e)),
    Math.max(5_000, deadline - Date.now()),
  );
  return { list, metadata, page };
}
