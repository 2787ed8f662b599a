/**
 * DESIGN §7 "nothing a caller sends can make the server crash, hang or answer 5xx": random JSON bodies
 * (shapeless, and shaped like each route's body with random values), malformed JSON, random headers and
 * random path parameters against every route of the built server. Only 2xx and 4xx may come back, every
 * 4xx in the one error shape, and the server must still be healthy afterwards.
 */
import fc from 'fast-check';
import { ensureBuilt, startServer, type ServerProcess } from './support/server-process.js';
import { scratch, type Scratch } from './support/e2e-config.js';
import { apiClient, until, type ApiClient, type Reply } from './support/http-client.js';

let dir: Scratch;
let server: ServerProcess;
let api: ApiClient;

beforeAll(async () => {
  ensureBuilt();
  dir = scratch('http-fuzz');
  server = await startServer({ config: dir.config, plugins: dir.plugins, database: dir.database('fuzz') });
  api = apiClient(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  dir?.remove();
});

function expectNoServerError(reply: Reply, what: string): void {
  if (reply.status >= 500 || reply.status < 200) throw new Error(`${what} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  if (reply.status >= 400) {
    expect(Object.keys(reply.body ?? {})).toEqual(['error']);
    expect(typeof reply.body.error.code).toBe('string');
    expect(typeof reply.body.error.message).toBe('string');
  }
}

async function waitingOperation(agentId: string): Promise<{ id: string; toolCallId: string }> {
  const created = await api.post('/v1/operations', { agentId, prompt: 'What time is it?' });
  const id = created.body.operationId as string;
  const waiting = await until(() => api.get(`/v1/operations/${id}`), (r) => r.body?.status === 'waiting', `${agentId} wait`);
  return { id, toolCallId: waiting.body.pendingTools[0].toolCallId };
}

const json = fc.jsonValue({ maxDepth: 3 });
/** Strings, including the awkward ones: NUL, lone surrogates, very long. */
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '\u0000', '\ud800', 'x'.repeat(5_000)));
const anyValue = fc.oneof(json, text);
/** URLs the SSRF guard refuses at once (loopback, no allow-list here) or the schema rejects: no real network. */
const url = fc.oneof(fc.constantFrom('http://127.0.0.1:9/hook', 'https://localhost/h', '/relative', '//evil.example', 'ftp://x', 'http://user:pw@127.0.0.1/', ''), text);
const webhook = fc.oneof(
  anyValue,
  fc.record(
    {
      url,
      delivery: fc.oneof(fc.constantFrom('fetch', 'queue', 'qstash'), anyValue),
      timeout: fc.oneof(fc.double(), anyValue),
      headers: fc.oneof(fc.dictionary(fc.string(), fc.string()), anyValue),
      allowedEnvVars: fc.oneof(fc.array(fc.string()), anyValue),
      body: fc.oneof(fc.dictionary(fc.string(), json), anyValue),
      eventFields: fc.oneof(fc.array(fc.string()), anyValue),
      responseHandling: fc.oneof(fc.constantFrom('ignore', 'toolCall', 'toolResult'), anyValue),
      onError: fc.oneof(fc.constantFrom('continue', 'block'), anyValue),
      fallback: fc.oneof(fc.constantFrom('none', 'fetch'), anyValue),
    },
    { requiredKeys: [] },
  ),
);
const hook = fc.record(
  {
    id: fc.oneof(fc.string(), anyValue),
    type: fc.oneof(fc.constantFrom('beforeStep', 'afterToolCall', 'beforeToolCall', 'onComplete', 'on_run_start'), anyValue),
    matcher: fc.oneof(fc.constantFrom('^clock/', '(a+)+$', '[', '*', ''), anyValue),
    webhook,
    handler: anyValue,
  },
  { requiredKeys: [] },
);
const createBody = fc.oneof(
  anyValue,
  fc.record(
    {
      agentId: fc.oneof(fc.constantFrom('assistant', 'nobody', ''), anyValue),
      prompt: anyValue,
      hooks: fc.oneof(fc.array(hook, { maxLength: 3 }), anyValue),
      context: fc.oneof(fc.record({ userId: anyValue, organizationId: anyValue, metadata: anyValue, authContext: anyValue }, { requiredKeys: [] }), anyValue),
    },
    { requiredKeys: [] },
  ),
);
/** Mostly valid bodies with valid-looking hooks, so the fuzz also reaches the runtime (201s, registered hooks). */
const nearValidCreate = fc.record(
  {
    agentId: fc.constantFrom('assistant', 'approver', 'deferring'),
    prompt: text,
    hooks: fc.array(
      fc.record(
        {
          id: fc.string({ minLength: 1, maxLength: 20 }),
          type: fc.constantFrom('beforeStep', 'afterStep', 'beforeToolCall', 'afterToolCall', 'onComplete', 'onToolCallError', 'beforeHumanIntervention'),
          matcher: fc.constantFrom('^clock/', '', '*', 'now$'),
          webhook: fc.record(
            {
              url: fc.constantFrom('http://127.0.0.1:9/hook', 'https://localhost/h', 'http://[::1]:9/x'),
              timeout: fc.constantFrom(0.5, 1, 2),
              responseHandling: fc.constantFrom('ignore', 'toolCall'),
              onError: fc.constantFrom('continue', 'block'),
              eventFields: fc.constantFrom(['operationId'], ['userId', 'userEmail'], []),
              headers: fc.dictionary(fc.constantFrom('x-a', 'x-b'), fc.string()),
            },
            { requiredKeys: ['url'] },
          ),
        },
        { requiredKeys: ['id', 'type', 'webhook'] },
      ),
      { maxLength: 3 },
    ),
    context: fc.record({ userId: anyValue, metadata: fc.dictionary(fc.string(), json) }, { requiredKeys: [] }),
  },
  { requiredKeys: ['agentId', 'prompt'] },
);
const interventionBody = fc.oneof(anyValue, fc.record({ action: fc.oneof(fc.constantFrom('approve', 'reject', 'rejectAndContinue'), anyValue), reason: anyValue }, { requiredKeys: [] }));
const toolResultBody = fc.oneof(anyValue, fc.record({ content: anyValue, success: anyValue }, { requiredKeys: [] }));
/** A body as sent on the wire: JSON of the value, or not JSON at all. */
const wire = (value: fc.Arbitrary<unknown>) => fc.oneof({ weight: 5, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') }, { weight: 1, arbitrary: fc.string() });
const printable = fc.string({ maxLength: 300 }).filter((s) => /^[\x20-\x7e]*$/.test(s));

describe('DESIGN §7 fuzz: no caller input yields a 5xx or a crash', () => {
  it('POST /v1/operations with random bodies and Idempotency-Keys', async () => {
    await fc.assert(
      fc.asyncProperty(wire(fc.oneof(createBody, nearValidCreate)), fc.option(printable), async (body, key) => {
        expectNoServerError(await api.post('/v1/operations', body, key === null ? {} : { 'idempotency-key': key }), `POST /v1/operations ${body.slice(0, 200)}`);
      }),
      { numRuns: 250 },
    );
  }, 60_000);

  it('POST …/interventions/:toolCallId and …/tool-results/:toolCallId with random bodies, on waiting operations', async () => {
    const approval = await waitingOperation('approver');
    const deferred = await waitingOperation('deferring');
    await fc.assert(
      fc.asyncProperty(wire(interventionBody), wire(toolResultBody), async (decision, result) => {
        expectNoServerError(await api.post(`/v1/operations/${approval.id}/interventions/${approval.toolCallId}`, decision), `interventions ${decision.slice(0, 200)}`);
        expectNoServerError(await api.post(`/v1/operations/${deferred.id}/tool-results/${deferred.toolCallId}`, result), `tool-results ${result.slice(0, 200)}`);
        // The other kind of pending call under each route: a 404, never a confusion.
        expectNoServerError(await api.post(`/v1/operations/${deferred.id}/interventions/${deferred.toolCallId}`, decision), 'interventions on a deferred call');
        expectNoServerError(await api.post(`/v1/operations/${approval.id}/tool-results/${approval.toolCallId}`, result), 'tool-results on an approval');
      }),
      { numRuns: 150 },
    );
    expectNoServerError(await api.post(`/v1/operations/${approval.id}/cancel`, '{"random":true}'), 'cancel with a body');
  }, 60_000);

  it('random path parameters on every route', async () => {
    const { id } = await waitingOperation('approver');
    const segment = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.uuid(), fc.constant(id)).map((s) => encodeURIComponent(s));
    await fc.assert(
      fc.asyncProperty(segment, segment, async (opId, callId) => {
        for (const path of ['', '/messages', '/timeline']) expectNoServerError(await api.get(`/v1/operations/${opId}${path}`), `GET ${path}`);
        expectNoServerError(await api.post(`/v1/operations/${opId}/interventions/${callId}`, { action: 'approve' }), 'interventions');
        expectNoServerError(await api.post(`/v1/operations/${opId}/tool-results/${callId}`, { content: 'x' }), 'tool-results');
      }),
      { numRuns: 100 },
    );
    // Bad percent-encoding, which the router itself must decode.
    expectNoServerError(await api.get('/v1/operations/%E0%A4%A/messages'), 'bad percent-encoding');
    await api.post(`/v1/operations/${id}/cancel`);
  }, 60_000);

  it('the server is still healthy and logged no 5xx', async () => {
    expect((await api.get('/healthz')).status).toBe(200);
    expect(server.child.exitCode).toBeNull();
    // The filter logs every 5xx as "HttpApi … failed (ErrorType)".
    expect(server.output()).not.toMatch(/HttpApi[^\n]*failed \(/);
  });
});
