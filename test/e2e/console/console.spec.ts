/**
 * Issue 17 / DESIGN §7 "The console", in a real browser against the built server (keys on): the key is
 * asked once and a wrong one is refused; an approval given in the page runs the tool and the operation
 * completes on screen without a reload; a denied call is marked denied in the waterfall; a deferred call
 * is completed from the form; the list shows an operation started elsewhere and follows it live (GET /v1/events). Screenshots of the list and of an
 * operation go to test-artifacts/console/; render times for 1,000 operations and 500 timeline rows are
 * measured with performance marks and printed (RESULT lines), never asserted.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { ensureBuilt, startServer, type ServerProcess } from '../support/server-process.js';
import { scratch, type Scratch } from '../support/e2e-config.js';
import { apiClient, until, type ApiClient } from '../support/http-client.js';
import { browserSuite, launchBrowser, type Browser } from './browser.js';
import { fakeOperationsApi } from './fake-api.js';
import { chunk, openStream, startChatCompletionsServer, type ChatCompletionsServer } from '../../integration/models/chat-completions-server.js';
import { deferred } from '../../integration/runtime/runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

const KEY = 'console-key-5e1f0c9b';

/** What the functions run in the page use of the browser's globals (the test itself compiles without DOM types). */
interface InPage {
  sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
  requestAnimationFrame(callback: (time: number) => void): number;
  document: { activeElement: { id: string; tagName: string; closest?(selector: string): unknown } | null };
  unreloaded?: boolean;
}
const ARTIFACTS = join('test-artifacts', 'console');
const TEST_MS = 90_000;

const CONFIG = scriptedConfig({
  system: 'console-e2e',
  models: {
    clock: { script: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')], costPerTokenUsd: 0.000001 },
    setter: [toolCalls(call('clock/set', { time: 'noon' })), answer('{{lastToolResult}}')],
    streaming: { provider: 'openai', model: 'gpt-test', baseUrlEnv: 'CONSOLE_LLM_BASE', apiKeyEnv: 'CONSOLE_LLM_KEY' },
  },
  agents: {
    writer: { model: 'streaming' },
    approver: { model: 'clock', tools: ['clock/now'], approval: ['^clock/'] },
    deferring: { model: 'clock', tools: ['clock/now'], deferred: ['^clock/'] },
    timekeeper: { model: 'setter', tools: ['clock/*'] },
  },
  hooks: { beforeToolCall: [{ plugin: 'quickstart_hooks', method: 'clockPolicy', matcher: '^clock/', onError: 'block' }], after_tool_call: [{ plugin: 'quickstart_hooks', method: 'auditToolCall', failure_policy: 'warn' }] },
});

const describeInBrowser = browserSuite('test/e2e/console/console.spec.ts');

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;
let browser: Browser;
/** The writer agent's model: a local server speaking the Chat Completions streaming format (SPEC K5). */
let llm: ChatCompletionsServer;

beforeAll(async () => {
  if (describeInBrowser === describe.skip) return;
  ensureBuilt();
  mkdirSync(ARTIFACTS, { recursive: true });
  dir = scratch('console');
  const config = join(dir.dir, 'console.yaml');
  writeFileSync(config, CONFIG);
  llm = await startChatCompletionsServer();
  server = await startServer({ config, plugins: dir.plugins, database: dir.database('console'), env: { AGENT_HOOKS_API_KEYS: `${KEY}:alice`, CONSOLE_LLM_BASE: llm.baseUrl, CONSOLE_LLM_KEY: 'console-llm-key' } });
  api = apiClient(server.url, KEY);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await llm?.close();
  dir?.remove();
});

const consoleUrl = (hash = '#/') => `${server.url}/console/${hash}`;

/** A tab that already has the key in its session storage (the prompt itself is tested on its own). */
async function signedInPage(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.addInitScript((key) => (globalThis as unknown as InPage).sessionStorage.setItem('nest-agent-hooks.console.api-key', key), KEY);
  return page;
}

async function startWaiting(agentId: string): Promise<{ id: string; toolCallId: string }> {
  const created = await api.post('/v1/operations', { agentId, prompt: 'What time is it?' });
  expect(created.status).toBe(201);
  const id = created.body.operationId as string;
  const waiting = await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'waiting', `operation ${id} to wait`);
  return { id, toolCallId: waiting.body.pendingTools[0].toolCallId };
}

/** A value set on the window survives only if the page was not reloaded. */
const markWindow = (page: Page) => page.evaluate(() => ((globalThis as unknown as InPage).unreloaded = true));
const stillSamePage = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).unreloaded === true);
const storedKey = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.getItem('nest-agent-hooks.console.api-key'));

describeInBrowser('DESIGN §7 the operations console', () => {
  it('serves the page at /console/ (and redirects /console), without a key; asset files only', async () => {
    const page = await fetch(`${server.url}/console`, { redirect: 'manual' });
    expect(page.status).toBe(301);
    expect(page.headers.get('location')).toBe('console/');
    const index = await fetch(`${server.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await index.text();
    // Relative asset URLs, nothing from another origin (works offline, under /console/).
    expect(html).toMatch(/src="\.\/assets\/[^"]+\.js"/);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect((await fetch(`${server.url}/console/../package.json`)).status).toBe(404);
    expect((await fetch(`${server.url}/console/assets/nothing.js`)).status).toBe(404);
    // Only listed files: no path from the URL reaches the file system, and nothing odd is a 5xx.
    for (const odd of ['..%2f..%2fpackage.json', '%2e%2e/%2e%2e/package.json', 'assets/%00', '%E0%A4%A', 'index.html%00.js', '.vite/manifest.json']) {
      const reply = await fetch(`${server.url}/console/${odd}`);
      // 400 is the router's own answer to bad percent-encoding, as on the API.
      expect([odd, [400, 404].includes(reply.status)]).toEqual([odd, true]);
    }
    // The API behind it still wants the key.
    expect((await fetch(`${server.url}/v1/operations`)).status).toBe(401);
  }, TEST_MS);

  it('asks for the key once; a wrong key → "key refused" and asked again; the right key → the list', async () => {
    const page = await browser.context.newPage();
    const sent: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/')) sent.push(request.headers()['authorization']);
    });
    await page.goto(consoleUrl());
    const dialog = page.getByRole('dialog', { name: 'API key' });
    await dialog.getByLabel('API key').fill('not-the-key');
    await dialog.getByRole('button', { name: 'Use this key' }).click();
    await expectVisible(page.getByTestId('key-refused'));
    expect(await page.getByTestId('key-refused').textContent()).toContain('Key refused');
    // A modal dialog: Tab never reaches the page behind it (inert), and Escape does not close it.
    const focusBehind = () =>
      page.evaluate(() => {
        const active = (globalThis as unknown as InPage).document.activeElement;
        return active !== null && active.tagName !== 'BODY' && active.closest?.('dialog') == null ? active.tagName : null;
      });
    for (let press = 0; press < 8; press++) {
      await page.keyboard.press('Tab');
      expect(await focusBehind()).toBeNull();
    }
    // Twice: a repeated Escape without user activation in between may not be cancellable.
    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    expect(await dialog.isVisible()).toBe(true);
    expect(await focusBehind()).toBeNull();
    await page.screenshot({ path: join(ARTIFACTS, 'key-refused.png') });
    expect(await storedKey(page)).toBeNull();

    // From the keyboard this time: Enter in the field sends the form.
    await dialog.getByLabel('API key').fill(KEY);
    await dialog.getByLabel('API key').press('Enter');
    await expectVisible(page.getByRole('table'));
    await dialog.waitFor({ state: 'detached' });
    expect(await storedKey(page)).toBe(KEY);
    expect(sent).toContain('Bearer not-the-key');
    // Requests are reported as the browser issues them, not always in order across connections: the right
    // key was sent after the wrong one was first refused.
    expect(sent.lastIndexOf(`Bearer ${KEY}`)).toBeGreaterThan(sent.indexOf('Bearer not-the-key'));
    // Kept for the browser session: a reload does not ask again.
    await page.reload();
    await expectVisible(page.getByRole('table'));
    expect(await page.getByRole('dialog').count()).toBe(0);
    await page.close();
  }, TEST_MS);

  it('A3: an operation waiting for approval → Approve in the page → the tool result and completed appear without a reload', async () => {
    const { id } = await startWaiting('approver');
    const page = await signedInPage();
    await page.goto(consoleUrl(`#/operations/${id}`));
    await expectVisible(page.getByRole('button', { name: 'Approve' }));
    await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (s) => s === 'waiting', 'the waiting status on the page');
    await page.screenshot({ path: join(ARTIFACTS, 'operation-waiting.png') });
    await markWindow(page);
    // Keyboard-operable: focus the button and press Enter, as a keyboard user would.
    await page.getByRole('button', { name: 'Approve' }).focus();
    await page.keyboard.press('Enter');

    const tool = page.locator('li[data-role="tool"]');
    await expectVisible(tool);
    expect(await tool.locator('pre.content').textContent()).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (s) => s === 'completed', 'the completed status on the page');
    expect(await page.getByTestId('operation-status').textContent()).toContain('completed');
    await expectVisible(page.locator('li[data-role="assistant"]', { hasText: 'It is ' }));
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    // The keyboard user's focus is not lost with the buttons: it is on the section's heading.
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.id)).toBe('pending-title');
    expect(await stillSamePage(page)).toBe(true);
    // The waterfall shows the allowed policy and the audit hook, labelled in words.
    await expectVisible(page.locator('.waterfall-row[data-outcome="allowed"]', { hasText: 'allowed' }));
    await expectVisible(page.locator('.waterfall-row[data-outcome="ok"]'));
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'operation-approved.png'), fullPage: true });
    await page.close();
  }, TEST_MS);

  it('F6: the approval form edits the arguments as JSON; the schema error is shown in the page and nothing is stored; then the approval runs the call', async () => {
    const { id } = await startWaiting('approver');
    const page = await signedInPage();
    await page.goto(consoleUrl(`#/operations/${id}`));
    const args = page.getByLabel('Arguments to approve with (JSON; edit them to run the call with yours)');
    await expectVisible(args);
    expect(JSON.parse((await args.inputValue()) || 'null')).toEqual({});
    // Not JSON: said in the page, nothing sent.
    await args.fill('{ zone: ');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expectVisible(page.getByRole('alert').filter({ hasText: 'The arguments are not valid JSON.' }));
    // JSON the tool's schema refuses (clock/now takes no arguments): the server's 400 names the path.
    await args.fill('{ "zone": "UTC" }');
    await page.getByRole('button', { name: 'Approve' }).click();
    await expectVisible(page.locator('.action-message', { hasText: 'Refused (400 invalid_arguments): args: invalid arguments for clock/now' }));
    expect((await api.get(`/v1/operations/${id}`)).body.status).toBe('waiting');
    // Back to the arguments as they were (spacing is not an edit): a plain approval runs the call.
    await args.fill('{ }');
    await page.getByRole('button', { name: 'Approve' }).click();
    await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (s) => s === 'completed', 'the completed status on the page');
    await page.close();
  }, TEST_MS);

  it('K5: the answer appears in the page as the model writes it, then gives way to its published message', async () => {
    const start = deferred();
    const rest = deferred();
    llm.handle((_call, res) => {
      const stream = openStream(res);
      void start.promise.then(async () => {
        stream.send(chunk({ content: 'Written ' }));
        stream.send(chunk({ content: 'as it ' }));
        await rest.promise;
        stream.send(chunk({ content: 'comes.' }));
        stream.send(chunk({}, 'stop'));
        stream.end();
      });
    });
    const created = await api.post('/v1/operations', { agentId: 'writer', prompt: 'Write something.' });
    expect(created.status).toBe(201);
    const id = created.body.operationId as string;
    const page = await signedInPage();
    await page.goto(consoleUrl(`#/operations/${id}`));
    // The page follows the operation (its first read is in): the model may start writing now.
    await expectVisible(page.locator('li[data-role="user"]'));
    start.resolve();
    const writing = page.locator('li[data-role="writing"]');
    await until(() => writing.textContent(), (text) => text?.includes('Written as it ') ?? false, 'the text being written, on the page');
    expect(await page.locator('li[data-role="assistant"]').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'operation-writing.png') });
    rest.resolve();
    await expectVisible(page.locator('li[data-role="assistant"]', { hasText: 'Written as it comes.' }));
    await until(() => writing.count(), (n) => n === 0, 'the written text to give way to the message');
    await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (s) => s === 'completed', 'the completed status on the page');
    await page.close();
  }, TEST_MS);

  it('a denied call shows as denied in the waterfall (and in the conversation), details on keyboard focus', async () => {
    const created = await api.post('/v1/operations', { agentId: 'timekeeper', prompt: 'noon' });
    const id = created.body.operationId as string;
    await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'completed', `operation ${id} to complete`);
    const page = await signedInPage();
    await page.goto(consoleUrl(`#/operations/${id}`));
    const denied = page.locator('.waterfall-row[data-outcome="denied"]');
    await expectVisible(denied);
    expect(await denied.textContent()).toContain('denied');
    expect(await denied.textContent()).toContain('quickstart_hooks.clockPolicy');
    // Focus (from the keyboard) shows the hook's details.
    const bar = denied.getByRole('img');
    await bar.focus();
    const tip = denied.getByRole('tooltip');
    await expectVisible(tip);
    expect(await tip.textContent()).toMatch(/quickstart_hooks\.clockPolicy[\s\S]*source config[\s\S]*denied/);
    await expectVisible(page.locator('li[data-role="tool"] .verdict', { hasText: 'Denied by a hook at beforeToolCall' }));
    await page.screenshot({ path: join(ARTIFACTS, 'operation-denied.png'), fullPage: true });
    await page.close();
  }, TEST_MS);

  it('L4: a deferred call is completed from the form; its result and completed appear without a reload', async () => {
    const { id } = await startWaiting('deferring');
    const page = await signedInPage();
    await page.goto(consoleUrl(`#/operations/${id}`));
    const content = page.getByLabel('Result content');
    await expectVisible(content);
    await markWindow(page);
    await content.fill('noon, from the console');
    await page.getByRole('button', { name: 'Send result' }).click();
    await expectVisible(page.locator('li[data-role="tool"] pre.content', { hasText: 'noon, from the console' }));
    await until(() => page.getByTestId('operation-status').getAttribute('data-status'), (s) => s === 'completed', 'the completed status on the page');
    expect(await stillSamePage(page)).toBe(true);
    expect((await api.get(`/v1/operations/${id}`)).body.reason).toBe('done');
    await page.close();
  }, TEST_MS);

  it('the list shows an operation started elsewhere as it starts and follows it live to completed (no reload)', async () => {
    const page = await signedInPage();
    await page.goto(consoleUrl());
    await expectVisible(page.getByText('updates live.'));
    await markWindow(page);
    // Started by another client after the page loaded: it arrives over GET /v1/events.
    const { id, toolCallId } = await startWaiting('approver');
    const row = page.locator(`tr:has(a[href="#/operations/${id}"])`);
    await expectVisible(row);
    await until(() => row.getAttribute('data-status'), (s) => s === 'waiting', 'the new row to show waiting');
    await until(async () => (await api.post(`/v1/operations/${id}/interventions/${toolCallId}`, { action: 'reject', reason: 'Not from the list.' })).status, (s) => s === 200, 'the rejection');
    await until(() => row.getAttribute('data-status'), (s) => s === 'completed', 'the row to show completed');
    expect(await row.textContent()).toContain('interrupted');
    expect(await stillSamePage(page)).toBe(true);
    // Newest first: the new operation is the top row.
    expect(await page.locator('tbody tr').first().locator('a').getAttribute('href')).toBe(`#/operations/${id}`);
    // The status filter reads the list again with ?status=.
    await page.getByLabel('Status').selectOption('completed');
    await until(() => page.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status'))), (s) => s.length > 0 && s.every((v) => v === 'completed'), 'only completed rows');
    await page.getByLabel('Status').selectOption('');
    await expectVisible(page.locator('tbody tr[data-status="completed"]').first());
    // Nothing went wrong on the way (a replaced read is not an error).
    expect(await page.getByRole('alert').count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, 'list.png'), fullPage: false });
    await page.close();
  }, TEST_MS);

  it('without API keys (a loopback-only server) the page asks for no key and lists the local owner\'s operations', async () => {
    const open = await startServer({ config: join(dir.dir, 'console.yaml'), plugins: dir.plugins, database: dir.database('console-open') });
    try {
      const created = await apiClient(open.url).post('/v1/operations', { agentId: 'timekeeper', prompt: 'noon' });
      expect(created.status).toBe(201);
      const page = await browser.context.newPage();
      await page.goto(`${open.url}/console/`);
      await expectVisible(page.locator(`tr:has(a[href="#/operations/${created.body.operationId}"])`));
      expect(await page.getByRole('dialog').count()).toBe(0);
      await page.close();
    } finally {
      await open.stop();
    }
  }, TEST_MS);

  it('renders 1,000 operations and an operation with 500 timeline rows (measured, printed as RESULT lines)', async () => {
    const page = await signedInPage();
    await fakeOperationsApi(page, { operations: 1_000, timelineRows: 500 });
    await page.goto(consoleUrl());
    // Generous: on a busy 2-core machine a thousand rows may take seconds (the figure is reported, not judged).
    await until(() => page.locator('tbody tr').count(), (n) => n === 1_000, '1,000 rows', 60_000);
    const list = await renderTime(page, 'console:list-data', 'console:list-rendered', 1_000);
    await page.screenshot({ path: join(ARTIFACTS, 'list-1000.png') });
    await page.close();

    // A page of its own: a hash change would be no navigation, and the figure since navigation would lie.
    const detail = await signedInPage();
    await fakeOperationsApi(detail, { operations: 1_000, timelineRows: 500 });
    await detail.goto(consoleUrl('#/operations/perf-operation'));
    await until(() => detail.locator('.waterfall-row').count(), (n) => n === 500, '500 waterfall rows', 60_000);
    const timeline = await renderTime(detail, 'console:timeline-data', 'console:timeline-rendered', 500);
    await detail.screenshot({ path: join(ARTIFACTS, 'operation-500-rows.png') });
    const lines = [
      `RESULT console list render: 1000 operations, ${list.render.toFixed(1)} ms from data to painted (${list.script.toFixed(1)} ms of it to the DOM commit), ${list.sinceNavigation.toFixed(1)} ms since navigation`,
      `RESULT console timeline render: 500 rows, ${timeline.render.toFixed(1)} ms from data to painted (${timeline.script.toFixed(1)} ms of it to the DOM commit), ${timeline.sinceNavigation.toFixed(1)} ms since navigation`,
    ];
    writeFileSync(join(ARTIFACTS, 'render-timings.txt'), `${lines.join('\n')}\n`);
    process.stdout.write(`\n${lines.join('\n')}\n`);
    await detail.close();
  }, TEST_MS);
});

async function expectVisible(locator: ReturnType<Page['locator']>): Promise<void> {
  await locator.first().waitFor({ state: 'visible', timeout: 15_000 });
}

/**
 * From the data mark (the response parsed) to the rendered mark (set by the page one frame after the rows
 * were committed: layout and paint included), for the marks with `count` items. `sinceNavigation` is the
 * rendered mark's time since the page's navigation began.
 */
async function renderTime(page: Page, dataMark: string, renderedMark: string, count: number): Promise<{ render: number; script: number; sinceNavigation: number }> {
  return page.evaluate(
    async ({ dataMark, renderedMark, count }) => {
      const withCount = (name: string) => performance.getEntriesByName(name).filter((entry) => (entry as unknown as { detail?: unknown }).detail === count);
      // The first answer with all rows (later re-reads, after events, find nothing new to render).
      const data = withCount(dataMark)[0];
      if (!data) throw new Error(`no ${dataMark} mark with ${count} items`);
      for (let frame = 0; !withCount(renderedMark).some((entry) => entry.startTime >= data.startTime) && frame < 600; frame++) await new Promise((resolve) => (globalThis as unknown as InPage).requestAnimationFrame(resolve));
      const rendered = withCount(renderedMark).find((entry) => entry.startTime >= data.startTime);
      if (!rendered) throw new Error(`no ${renderedMark} mark with ${count} items after the data`);
      const committed = withCount(renderedMark.replace('-rendered', '-committed')).find((entry) => entry.startTime >= data.startTime);
      return { render: rendered.startTime - data.startTime, script: (committed?.startTime ?? NaN) - data.startTime, sinceNavigation: rendered.startTime };
    },
    { dataMark, renderedMark, count },
  );
}
