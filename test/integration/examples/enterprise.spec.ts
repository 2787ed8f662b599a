/**
 * SPEC X: the enterprise knowledge assistant (examples/enterprise-knowledge-assistant) run for real —
 * its agents.yaml (server URLs pointed at two local SDK MCP servers), its plugins.toml and its
 * ResearchHooksHook plugin — through AgentHooksModule and AgentRuntime.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInThisContext } from 'node:vm';
import { Test, type TestingModule } from '@nestjs/testing';
import { AgentHooksModule, HookDispatcher, HookFailedError, type HookOutcomeRecord } from '../../../src/index.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { completion, sendJson, startChatCompletionsServer } from '../models/chat-completions-server.js';
import { CONTEXT7_DOCS, LONG_WIKI_PAGE, startContext7, startDeepwiki, type ResearchServer } from './research-mcp-servers.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/enterprise-knowledge-assistant/', import.meta.url));
const CONTEXT7_KEY = 'ctx7-test-key-5d02a1';
const ANTHROPIC_KEY = 'anthropic-test-key-9be3';
const SUFFIX = '\n… [truncated]';

/**
 * The plugin is imported natively (jiti, outside Jest's module sandbox), so it reads the REAL process
 * environment, while a test's `process.env` is Jest's copy. `runInThisContext` evaluates in Node's main
 * context, whose `process` is the real one; the test sets and restores the keys there.
 */
const env = runInThisContext('process.env') as NodeJS.ProcessEnv;

let dir: string;
let savedEnv: NodeJS.ProcessEnv;
let context7: ResearchServer;
let deepwiki: ResearchServer;
let moduleRef: TestingModule | undefined;

/**
 * The example's agents.yaml with its two server URLs replaced by the test servers', and — when given — its
 * scripted `research` model replaced by another model entry (one line of YAML flow mapping).
 */
function exampleConfig(researchModel?: string): string {
  const text = readFileSync(join(EXAMPLE, 'agents.yaml'), 'utf8');
  let replaced = text
    .replace(/(context7: \{ url: )"[^"]+"/, `$1"${context7.url}"`)
    .replace(/(deepwiki: \{ url: )"[^"]+"/, `$1"${deepwiki.url}"`);
  if (researchModel !== undefined) replaced = replaced.replace(/^ {2}research:\n(?: {4}.*\n)+/m, `  research: ${researchModel}\n`);
  // Fails loudly if the example's layout changes and the substitution silently stops applying.
  expect(replaced).toContain(context7.url);
  expect(replaced).toContain(deepwiki.url);
  if (researchModel !== undefined) expect(replaced).toContain(`research: ${researchModel}`);
  const file = join(dir, 'agents.yaml');
  writeFileSync(file, replaced);
  return file;
}

async function compileExample(researchModel?: string): Promise<{ ref: TestingModule; logLines: string[] }> {
  const logLines: string[] = [];
  const keep = (level: string) => (message: unknown, ...rest: unknown[]) => void logLines.push(`${level} ${[message, ...rest].map(String).join(' ')}`);
  const ref = await Test.createTestingModule({
    imports: [
      AgentHooksModule.forRoot({
        configFile: exampleConfig(researchModel),
        pluginsFile: join(EXAMPLE, 'plugins', 'plugins.toml'),
        database: `sqlite:${join(dir, 'db.sqlite')}`,
      }),
    ],
  }).compile();
  ref.useLogger({ log: keep('log'), error: keep('error'), warn: keep('warn'), debug: () => undefined, verbose: () => undefined, fatal: keep('fatal') });
  moduleRef = ref;
  return { ref, logLines };
}

beforeEach(async () => {
  savedEnv = { ...env };
  dir = mkdtempSync(join(tmpdir(), 'enterprise-example-'));
  [context7, deepwiki] = await Promise.all([startContext7(CONTEXT7_KEY), startDeepwiki()]);
});

afterEach(async () => {
  await moduleRef?.close().catch(() => undefined);
  moduleRef = undefined;
  await Promise.all([context7.close(), deepwiki.close()]);
  rmSync(dir, { recursive: true, force: true });
  // Restore the environment exactly: drop keys a test added, put back the values it changed.
  for (const key of Object.keys(env)) if (!(key in savedEnv)) delete env[key];
  Object.assign(env, savedEnv);
});

describe('X enterprise knowledge assistant', () => {
  it('X/E2/E6: runs against both MCP servers: context7 gets the bearer token, deepwiki never sees Authorization, the 20,000-char result is published trimmed to 8,000 + suffix', async () => {
    env.ANTHROPIC_API_KEY = ANTHROPIC_KEY;
    env.CONTEXT7_API_KEY = CONTEXT7_KEY;
    const { ref, logLines } = await compileExample();
    await ref.init();
    const outcomes: HookOutcomeRecord[] = [];
    const subscription = ref.get(HookDispatcher).outcomes$.subscribe((record) => outcomes.push(record));

    const result = await ref.get(AgentRuntime).run('How do providers work?', { agentId: 'researcher' });
    subscription.unsubscribe();

    expect(result.reason).toBe('done');
    expect(result.content).toBe('Here is what the documentation and the wiki say.');
    // Both servers answered the tool call; context7 never refused, deepwiki never saw a header.
    expect(context7.toolCalls).toEqual(['get-library-docs']);
    expect(deepwiki.toolCalls).toEqual(['read_wiki_contents']);
    expect(context7.unauthorized).toBe(0);
    expect(deepwiki.authorizationSeen).toBe(0);

    const tools = (await ref.get<RuntimeStore>(RUNTIME_STORE).messages(result.operationId)).filter((m) => m.role === 'tool');
    const docs = tools.find((m) => m.identifier === 'context7');
    const wiki = tools.find((m) => m.identifier === 'deepwiki');
    expect(docs?.content).toBe(CONTEXT7_DOCS);
    expect(LONG_WIKI_PAGE).toHaveLength(20_000);
    expect(wiki?.content).toBe(LONG_WIKI_PAGE.slice(0, 8_000) + SUFFIX);
    expect(wiki?.content.length).toBe(8_000 + SUFFIX.length);
    expect(wiki?.content).not.toContain('CUT-HERE');

    // Every hook of the example ran, and succeeded (audit under warn included).
    const ran = (hookId: string) => outcomes.filter((o) => o.hookId === hookId).map((o) => o.outcome);
    expect(ran('research_hooks.audit_tool_call')).toEqual(['ok', 'ok']);
    expect(ran('research_hooks.trim_result')).toEqual(['ok', 'ok']);
    expect(ran('research_hooks.inject_context7_auth').length).toBeGreaterThanOrEqual(4); // both servers' requests
    expect(ran('research_hooks.inject_context7_auth').every((o) => o === 'ok')).toBe(true);

    // S1: nothing logged holds the key or the result body.
    const logged = logLines.join('\n');
    expect(logged).not.toContain(CONTEXT7_KEY);
    expect(logged).not.toContain(ANTHROPIC_KEY);
    expect(logged).not.toContain('wwwwwwwwww');
  });

  it('X/E6: the token is read at call time: a wrong CONTEXT7_API_KEY set after the start is refused by context7 (fail closed), deepwiki still unauthenticated', async () => {
    env.ANTHROPIC_API_KEY = ANTHROPIC_KEY;
    env.CONTEXT7_API_KEY = CONTEXT7_KEY;
    const { ref } = await compileExample();
    await ref.init();
    env.CONTEXT7_API_KEY = 'rotated-wrong-key-1234';
    const result = await ref.get(AgentRuntime).run('How do providers work?', { agentId: 'researcher' });
    const tools = (await ref.get<RuntimeStore>(RUNTIME_STORE).messages(result.operationId)).filter((m) => m.role === 'tool');
    expect(context7.unauthorized).toBeGreaterThan(0);
    expect(context7.toolCalls).toEqual([]);
    expect(tools.find((m) => m.identifier === 'context7')?.content).not.toContain(CONTEXT7_DOCS);
    expect(deepwiki.toolCalls).toEqual(['read_wiki_contents']);
    expect(deepwiki.authorizationSeen).toBe(0);
  });

  it('X/E2/E6: without ANTHROPIC_API_KEY and CONTEXT7_API_KEY the start fails, naming validate_environment and printing no value', async () => {
    delete env.ANTHROPIC_API_KEY;
    delete env.CONTEXT7_API_KEY;
    const { ref } = await compileExample();
    const error = await ref.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HookFailedError);
    expect((error as HookFailedError).point).toBe('on_engine_start');
    expect((error as HookFailedError).hookId).toBe('research_hooks.validate_environment');
    expect((error as Error).message).toContain('research_hooks.validate_environment');
    // No MCP request was made on behalf of a start that failed.
    expect(context7.toolCalls).toEqual([]);
    expect(deepwiki.toolCalls).toEqual([]);
  });

  it('X: one key missing is enough to fail the start; the other key\'s value is never printed', async () => {
    env.ANTHROPIC_API_KEY = ANTHROPIC_KEY;
    delete env.CONTEXT7_API_KEY;
    const { ref } = await compileExample();
    const error = await ref.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HookFailedError);
    expect((error as Error).message).toContain('research_hooks.validate_environment');
    expect((error as Error).message).not.toContain(ANTHROPIC_KEY);
    expect(String((error as Error).cause)).not.toContain(ANTHROPIC_KEY);
  });

  it('X/K1: the example\'s redact_pii (before_model_request) keeps e-mail, card and phone numbers from the model provider, in the prompt and in earlier tool calls', async () => {
    env.ANTHROPIC_API_KEY = ANTHROPIC_KEY;
    env.CONTEXT7_API_KEY = CONTEXT7_KEY;
    // A provider on loopback stands in for the scripted model, so the test sees every request that leaves.
    const provider = await startChatCompletionsServer();
    const email = 'jane.doe@example.com';
    const turns = [
      // The model echoes personal data into a tool call's arguments: the next request replays that call.
      { content: null, tool_calls: [{ id: 'call_docs', type: 'function', function: { name: 'context7__get-library-docs', arguments: JSON.stringify({ libraryId: '/nestjs/docs', topic: `providers for ${email}` }) } }] },
      { content: 'Providers are classes Nest can inject.' },
    ];
    provider.handle((_call, res) => sendJson(res, 200, completion(turns[provider.calls.length - 1]!, { prompt_tokens: 10, completion_tokens: 5 })));
    for (const target of [env, process.env]) {
      target.X_MODEL_URL = provider.baseUrl;
      target.X_MODEL_KEY = 'x-model-key-51c0';
    }
    try {
      const { ref } = await compileExample('{ provider: openai, model: gpt-redact, baseUrlEnv: X_MODEL_URL, apiKeyEnv: X_MODEL_KEY }');
      await ref.init();
      const outcomes: HookOutcomeRecord[] = [];
      const subscription = ref.get(HookDispatcher).outcomes$.subscribe((record) => outcomes.push(record));
      const prompt = `How do providers work? Reply to ${email} or +1 415 555 0100; bill card 4111 1111 1111 1111. Order 1700000000000 from 2026-11-30.`;
      const result = await ref.get(AgentRuntime).run(prompt, { agentId: 'researcher' });
      subscription.unsubscribe();

      expect(result).toMatchObject({ reason: 'done', content: 'Providers are classes Nest can inject.' });
      expect(provider.calls).toHaveLength(2);
      const wire = JSON.stringify(provider.calls.map((call) => call.body));
      for (const secret of [email, '415 555 0100', '4111 1111 1111 1111']) expect(wire).not.toContain(secret);
      // Only the personal data went: the order number (no valid check digit) and the date are kept.
      expect(provider.calls[0]!.body.messages.find((m: { role: string }) => m.role === 'user').content).toBe(
        'How do providers work? Reply to [email] or [phone]; bill card [card number]. Order 1700000000000 from 2026-11-30.',
      );
      const replayed = provider.calls[1]!.body.messages.find((m: { role: string }) => m.role === 'assistant');
      expect(JSON.parse(replayed.tool_calls[0].function.arguments)).toEqual({ libraryId: '/nestjs/docs', topic: 'providers for [email]' });
      // The tool ran with the model's own arguments, and the conversation keeps the user's words: only what leaves is redacted.
      expect(context7.toolCalls).toEqual(['get-library-docs']);
      const stored = await ref.get<RuntimeStore>(RUNTIME_STORE).messages(result.operationId);
      expect(stored.find((m) => m.role === 'user')?.content).toBe(prompt);
      expect(outcomes.filter((o) => o.hookId === 'research_hooks.redact_pii').map((o) => o.outcome)).toEqual(['ok', 'ok']);
    } finally {
      delete process.env.X_MODEL_URL;
      delete process.env.X_MODEL_KEY;
      await provider.close();
    }
  });
});
