/**
 * SPEC G1 over HTTP (DESIGN §7): on the built server, an agent offered `clock/now` whose model asks for
 * `clock/set` gets a `tool_not_available` result (the quickstart hole found by outside testing), and
 * declared client tools — configured and per operation (`POST /v1/operations { clientTools }`) — are
 * handed out as deferred and completed through `…/tool-results`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, expectErrorShape, until, type ApiClient } from './support/http-client.js';
import { answer, call, scriptedConfig, toolCalls } from '../support/scripted-config.js';

const CONFIG = scriptedConfig({
  system: 'http-tool-access',
  clientTools: { 'browser/open': { description: 'Open a page in the user\'s browser', parameters: { type: 'object', properties: { url: { type: 'string' } }, required: ['url'] } }, 'device/flash': { description: 'Turns the flash on', parameters: { type: 'object', properties: {} } } },
  models: {
    setting: [toolCalls(call('clock/set', { time: 'noon' })), answer('{{lastToolResult}}')],
    opening: [toolCalls(call('browser/open', { url: 'https://example.com' })), answer('page: {{lastToolResult}}')],
    photographing: [toolCalls(call('device/photo', { zoom: 2 })), answer('photo: {{lastToolResult}}')],
  },
  agents: {
    sneaky: { model: 'setting', tools: ['clock/now'] },
    navigator: { model: 'opening', tools: ['browser/*'] },
    camera: { model: 'photographing', tools: ['device/*'] },
  },
  hooks: { beforeToolCall: [{ plugin: 'quickstart_hooks', method: 'clockPolicy', matcher: '^clock/', onError: 'block' }] },
});

const PHOTO = { identifier: 'device', apiName: 'photo', description: 'Takes a photo', parameters: { type: 'object', properties: { zoom: { type: 'number' } } } };

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-tool-access');
  const config = join(dir.dir, 'tool-access.yaml');
  writeFileSync(config, CONFIG);
  server = await startServer({ config, plugins: dir.plugins, database: dir.database('tool-access') });
  api = apiClient(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

const operation = (id: string) => api.get(`/v1/operations/${id}`);
const settled = (id: string, status: string) => until(() => operation(id), (r) => r.body?.status === status, `operation ${id} to be ${status}`);
const toolMessages = async (id: string) => (await api.get(`/v1/operations/${id}/messages`)).body.messages.filter((m: { role: string }) => m.role === 'tool');

describe('G1 tool access over HTTP', () => {
  it('G1: an agent offered clock/now never runs clock/set: tool_not_available in messages and timeline', async () => {
    const created = await api.post('/v1/operations', { agentId: 'sneaky', prompt: 'noon' });
    expect(created.status).toBe(201);
    const id = created.body.operationId as string;
    expect((await settled(id, 'completed')).body.reason).toBe('done');
    const [tool] = await toolMessages(id);
    expect(tool).toMatchObject({ identifier: 'clock', apiName: 'set', state: { error: { type: 'tool_not_available' } } });
    expect(tool.content).toContain('clock/set');
    expect(tool.content).not.toContain('cannot be set'); // the tool's own answer: it never ran
    const timeline = await until(() => api.get(`/v1/operations/${id}/timeline`), (r) => (r.body?.items?.length ?? 0) > 0, 'the timeline');
    expect(timeline.body.items).toEqual([expect.objectContaining({ point: 'beforeToolCall', source: 'runtime', outcome: 'denied', errorCode: 'tool_not_available' })]);
  });

  it('G1: a configured client tool is handed out (pendingTools kind deferred) and completed through tool-results', async () => {
    const id = (await api.post('/v1/operations', { agentId: 'navigator', prompt: 'open' })).body.operationId as string;
    const waiting = await settled(id, 'waiting');
    expect(waiting.body.pendingTools).toEqual([expect.objectContaining({ identifier: 'browser', apiName: 'open', args: { url: 'https://example.com' }, kind: 'deferred' })]);
    const toolCallId = waiting.body.pendingTools[0].toolCallId as string;
    expect((await api.post(`/v1/operations/${id}/tool-results/${toolCallId}`, { content: '<html>hi</html>' })).status).toBe(200);
    expect(await toolMessages(id)).toEqual([expect.objectContaining({ content: '<html>hi</html>' })]);
    await settled(id, 'completed');
  });

  it('G1: POST /v1/operations { clientTools } declares a per-operation client tool', async () => {
    const created = await api.post('/v1/operations', { agentId: 'camera', prompt: 'smile', clientTools: [PHOTO] });
    expect(created.status).toBe(201);
    const waiting = await settled(created.body.operationId, 'waiting');
    expect(waiting.body.pendingTools).toEqual([expect.objectContaining({ identifier: 'device', apiName: 'photo', kind: 'deferred' })]);
  });

  it.each([
    ['a bad name', [{ ...PHOTO, identifier: '../etc' }], 'clientTools[0].identifier'],
    ['a name taken by a local tool', [{ ...PHOTO, identifier: 'clock', apiName: 'set' }], 'clientTools[0]'],
    ['an invalid schema', [{ ...PHOTO, parameters: { type: 'object', properties: { zoom: { type: 7 } } } }], 'clientTools[0].parameters'],
  ])('G1, G6: clientTools with %s is a 400 naming the field', async (_what, clientTools, field) => {
    const reply = await api.post('/v1/operations', { agentId: 'camera', prompt: 'x', clientTools });
    expectErrorShape(reply, 400, 'invalid_request');
    expect(reply.body.error.message).toContain(field);
  });
});
