/**
 * SPEC K5 at the command line: `agentctl run` (the built CLI, a real child process) prints the answer as the
 * model writes it — the first pieces are on its stdout while the local provider still holds the rest — and
 * prints it once.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chunk, openStream, startChatCompletionsServer, usageChunk, type ChatCompletionsServer } from '../integration/models/chat-completions-server.js';
import { deferred, eventually, within } from '../integration/runtime/runtime-test-kit.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { ensureBuilt } from './support/server-process.js';

const CONFIG = `
system: agentctl-streaming
models:
  remote: { provider: openai, model: gpt-test, baseUrlEnv: RUN_LLM_BASE, apiKeyEnv: RUN_LLM_KEY }
agents:
  writer: { model: remote }
`;

let dir: Scratch;
let llm: ChatCompletionsServer;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('agentctl-streaming');
  writeFileSync(join(dir.dir, 'streaming.yaml'), CONFIG);
  llm = await startChatCompletionsServer();
}, 180_000);

afterAll(async () => {
  await llm?.close();
  dir?.remove();
});

describe('K5: agentctl run', () => {
  it('K5: agentctl run prints deltas as they come, and the answer once', async () => {
    const rest = deferred();
    llm.handle((_call, res) => {
      const stream = openStream(res);
      stream.send(chunk({ role: 'assistant', content: '' }));
      stream.send(chunk({ content: 'Streaming ' }));
      stream.send(chunk({ content: 'to the ' }));
      void rest.promise.then(() => {
        stream.send(chunk({ content: 'terminal.' }));
        stream.send(chunk({}, 'stop'));
        stream.send(usageChunk({ prompt_tokens: 5, completion_tokens: 3 }));
        stream.end();
      });
    });
    const child = spawn(process.execPath, ['dist/cli/agentctl.js', 'run', 'writer', 'hi', '--config', join(dir.dir, 'streaming.yaml'), '--database', dir.database('run')], {
      env: { ...process.env, RUN_LLM_BASE: llm.baseUrl, RUN_LLM_KEY: 'run-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      // The first pieces are printed while the model has not finished.
      await eventually(() => stdout.includes('Streaming to the '), 'the first pieces on stdout', 60_000);
      expect(stdout).not.toContain('terminal.');
      expect(child.exitCode).toBeNull();
      rest.resolve();
      expect(await within(exited, 'agentctl run exits', 60_000)).toBe(0);
    } finally {
      child.kill();
    }
    expect(stdout.startsWith('Streaming to the terminal.\n\noperation ')).toBe(true);
    expect(stdout.match(/Streaming to the terminal\./g)).toHaveLength(1);
  }, 120_000);
});
