/**
 * W7–W13, W6, B2, D2–D3 end to end: the real module (dispatcher + delivery service + undici client + SSRF
 * guard with a loopback allow-list) against a real HTTP receiver on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { Webhook } from 'standardwebhooks';
import {
  AgentHooksModule,
  CriticalHookDeliveryError,
  HookDispatcher,
  HookRegistry,
  type AfterToolCallEvent,
  type AgentHook,
  type BeforeToolCallObservationEvent,
  type HookOutcomeRecord,
  type ToolControlPoint,
} from '../../../src/index.js';
import { QUEUED_WEBHOOK_DELIVERY, type QueuedWebhook } from '../../../src/webhooks/queued-delivery.port.js';
import { eventually } from '../../support/eventually.js';

type Responder = (req: IncomingMessage, res: ServerResponse, body: string) => void;

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let base: string;
const received: Received[] = [];
const routes = new Map<string, Responder>();

function json(value: unknown, status = 200): Responder {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(typeof value === 'string' ? value : JSON.stringify(value));
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      const route = routes.get(path);
      if (route) route(req, res, body);
      else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  routes.set('/204', (_req, res) => {
    res.writeHead(204);
    res.end();
  });
  routes.set('/empty', (_req, res) => {
    res.writeHead(200);
    res.end();
  });
  routes.set('/not-json', json('this is not json'));
  routes.set('/array', json([{ decision: 'deny' }]));
  routes.set('/scalar', json('"deny"'));
  routes.set('/number', json('42'));
  routes.set('/null', json('null'));
  routes.set('/empty-object', json({}));
  routes.set('/legacy', json({ hookSpecificOutput: { permissionDecision: 'deny', decision: 'deny' } }));
  routes.set('/allow', json({ decision: 'allow', updatedInput: { path: '/etc/passwd' }, additionalContext: 'ignored' }));
  routes.set('/deny', json({ decision: 'deny', reason: 'policy says no', extra: true }));
  routes.set('/deny-empty', json({ decision: 'deny', reason: '' }));
  routes.set('/invalid-decision', json({ decision: 'block' }));
  routes.set('/invalid-reason', json({ decision: 'deny', reason: 7 }));
  routes.set('/500', json({ decision: 'allow' }, 500));
  routes.set('/redirect', (_req, res) => {
    res.writeHead(302, { location: `${base}/allow` });
    res.end();
  });
  routes.set('/too-large', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`{"decision":"allow","pad":"${'x'.repeat(65_537)}"}`);
  });
  routes.set('/bad-utf8', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(Buffer.from([0x7b, 0x22, 0x64, 0xff, 0xfe, 0x22, 0x7d]));
  });
  routes.set('/reset', (req) => req.socket.destroy());
  routes.set('/slow', (_req, res) => {
    const timer = setTimeout(() => json({ decision: 'allow' })(_req, res, ''), 5_000);
    res.on('close', () => clearTimeout(timer));
  });
  routes.set('/notify', (_req, res) => {
    res.writeHead(200);
    res.end('ignored body');
  });
  routes.set('/notify-fail', (_req, res) => {
    res.writeHead(503);
    res.end();
  });
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let moduleRef: TestingModule;
let dispatcher: HookDispatcher;
let registry: HookRegistry;
let outcomes: HookOutcomeRecord[];
const queued: QueuedWebhook[] = [];
let queueFails = false;

async function boot(extra: { signingSecret?: string } = {}): Promise<void> {
  // The host app provides the queue port in one of its own modules; the delivery service finds it there.
  const queuePort = {
    enqueue: async (webhook: QueuedWebhook) => {
      if (queueFails) throw new Error('queue is down');
      queued.push(webhook);
    },
  };
  @Module({ providers: [{ provide: QUEUED_WEBHOOK_DELIVERY, useValue: queuePort }] })
  class HostQueueModule {}
  moduleRef = await Test.createTestingModule({
    imports: [
      HostQueueModule,
      AgentHooksModule.forRoot({
        configFile: false,
        webhooks: { allowNetworks: ['127.0.0.0/8'], ...(extra.signingSecret ? { signingSecret: extra.signingSecret } : {}) },
      }),
    ],
  }).compile();
  await moduleRef.init();
  dispatcher = moduleRef.get(HookDispatcher);
  registry = moduleRef.get(HookRegistry);
  outcomes = [];
  dispatcher.outcomes$.subscribe((record) => outcomes.push(record));
}

beforeEach(async () => {
  received.length = 0;
  queued.length = 0;
  queueFails = false;
  await boot();
});

afterEach(async () => {
  await moduleRef.close();
});

function beforeEvent(operationId = 'op-1'): BeforeToolCallObservationEvent {
  return {
    id: 'evt-1',
    type: 'beforeToolCall',
    operationId,
    agentId: 'assistant',
    userId: 'user-1',
    stepIndex: 0,
    timestamp: new Date().toISOString(),
    toolCallId: 'call-1',
    assistantMessageId: 'msg-1',
    identifier: 'fs',
    apiName: 'readFile',
    args: { path: '/tmp/a' },
    callIndex: 0,
    executor: 'server',
  };
}

function afterEvent(operationId = 'op-1'): AfterToolCallEvent {
  return {
    ...beforeEvent(operationId),
    type: 'afterToolCall',
    result: { content: 'file contents', success: true, data: { raw: 'x'.repeat(100) } },
    mocked: false,
  };
}

function control(point: ToolControlPoint, path: string, onError: 'continue' | 'block', extra: Partial<AgentHook['webhook']> = {}): AgentHook {
  return { id: `ctl${path}`, type: point, webhook: { url: `${base}${path}`, responseHandling: 'toolCall', onError, timeout: 0.3, ...extra } };
}

async function verdictFor(point: ToolControlPoint, hooks: AgentHook[], signal?: AbortSignal) {
  registry.register('op-1', hooks);
  const options = signal ? { signal } : {};
  if (point === 'beforeToolCall') return (await dispatcher.gateToolCall(beforeEvent(), options)).verdict;
  return dispatcher.gateToolResult(afterEvent(), options);
}

const NOTIFICATION_ROWS = ['/204', '/empty', '/not-json', '/array', '/scalar', '/number', '/null', '/empty-object', '/legacy'];
const ERROR_ROWS: Array<[string, string]> = [
  ['/invalid-decision', 'invalid_response'],
  ['/invalid-reason', 'invalid_response'],
  ['/500', 'http_error'],
  ['/redirect', 'http_error'],
  ['/too-large', 'response_too_large'],
  ['/bad-utf8', 'invalid_response'],
  ['/reset', 'network_error'],
  ['/slow', 'timeout'],
];

describe.each(['beforeToolCall', 'afterToolCall'] as const)('W11/W12 over HTTP at %s', (point) => {
  describe.each(['continue', 'block'] as const)('onError: %s', (onError) => {
    it.each(NOTIFICATION_ROWS)(`W11: %s is a notification: allowed, and a later deny still applies`, async (path) => {
      expect(await verdictFor(point, [control(point, path, onError)])).toEqual({ outcome: 'allowed' });
      expect(outcomes.at(-1)).toMatchObject({ hookId: `ctl${path}`, outcome: 'notification', source: 'caller' });
      await moduleRef.close();
      await boot();
      const verdict = await verdictFor(point, [control(point, path, onError), control(point, '/deny', 'continue')]);
      expect(verdict).toMatchObject({ outcome: 'denied', hookId: 'ctl/deny', reason: 'policy says no' });
    });

    it.each(ERROR_ROWS)(`W12: %s is a control error (%s) that follows onError`, async (path, code) => {
      const verdict = await verdictFor(point, [control(point, path, onError)]);
      if (onError === 'block') {
        expect(verdict).toEqual({ outcome: 'control_error', phase: point, hookId: `ctl${path}`, reason: 'hook_control_error', error: 'hook_control_error', errorCode: code });
      } else {
        expect(verdict).toEqual({ outcome: 'allowed' });
      }
      expect(outcomes.at(-1)).toMatchObject({ hookId: `ctl${path}`, outcome: 'error', errorCode: code });
    });

    it('W8/W9/W13: a deny carries its reason; extra fields are dropped', async () => {
      expect(await verdictFor(point, [control(point, '/deny', onError)])).toEqual({
        outcome: 'denied',
        phase: point,
        hookId: 'ctl/deny',
        reason: 'policy says no',
        error: 'hook_denied',
      });
    });

    it('W8/W9: a deny with an empty reason uses the default', async () => {
      expect(await verdictFor(point, [control(point, '/deny-empty', onError)])).toMatchObject({ outcome: 'denied', reason: `Blocked by ${point} hook.` });
    });

    it('W8/W13: an allow moves on to the next control; updatedInput changes nothing', async () => {
      const verdict = await verdictFor(point, [control(point, '/allow', onError), control(point, '/deny', onError)]);
      expect(verdict).toMatchObject({ outcome: 'denied', hookId: 'ctl/deny' });
    });

    it('W12: cancellation never grants permission, whatever onError says', async () => {
      const controller = new AbortController();
      const before = received.length;
      const verdicting = verdictFor(point, [control(point, '/slow', onError, { timeout: 10 })], controller.signal);
      // Abort while the control is in flight: once the receiver has the request (it answers after 5 s).
      await eventually(() => received.slice(before).some((r) => r.path === '/slow'), 'the receiver to have the control request');
      controller.abort();
      const verdict = await verdicting;
      expect(verdict).toMatchObject({ outcome: 'control_error', errorCode: 'cancelled', reason: 'hook_control_error' });
    });
  });
});

describe('W12 timeout vs cancellation', () => {
  it('a deadline that passes is timeout; a caller abort is cancelled', async () => {
    const timedOut = await verdictFor('beforeToolCall', [control('beforeToolCall', '/slow', 'block', { timeout: 0.1 })]);
    expect(timedOut).toMatchObject({ errorCode: 'timeout' });
    registry.unregister('op-1');
    const controller = new AbortController();
    controller.abort();
    const cancelled = await verdictFor('beforeToolCall', [control('beforeToolCall', '/slow', 'continue', { timeout: 10 })], controller.signal);
    expect(cancelled).toMatchObject({ errorCode: 'cancelled' });
  });
});

describe('W6 send-time header templates', () => {
  it('resolves ${VAR} from allowedEnvVars on every send (rotation) and never stores the value', async () => {
    process.env.HOOK_TOKEN_TEST = 'first-secret-value';
    try {
      registry.register('op-1', [
        { id: 'n', type: 'afterStep', webhook: { url: `${base}/notify`, headers: { Authorization: 'Bearer ${HOOK_TOKEN_TEST}' }, allowedEnvVars: ['HOOK_TOKEN_TEST'] } },
      ]);
      const event = { id: 'e', type: 'afterStep', operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: '', content: 'c', toolCalls: [], toolResults: [], usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } } as const;
      await dispatcher.dispatch('afterStep', event);
      process.env.HOOK_TOKEN_TEST = 'rotated-secret-value';
      await dispatcher.dispatch('afterStep', event);
      expect(received.map((r) => r.headers.authorization)).toEqual(['Bearer first-secret-value', 'Bearer rotated-secret-value']);
      const stored = registry.callerHooks('op-1', 'afterStep')[0]!;
      expect(JSON.stringify(stored.webhook)).toContain('${HOOK_TOKEN_TEST}');
      expect(JSON.stringify(stored.webhook)).not.toContain('secret-value');
    } finally {
      delete process.env.HOOK_TOKEN_TEST;
    }
  });

  it('an unset variable is a configuration error raised before anything is sent, naming the variable only', async () => {
    registry.register('op-1', [control('beforeToolCall', '/allow', 'block', { headers: { Authorization: 'Bearer ${MISSING_TOKEN_TEST}' }, allowedEnvVars: ['MISSING_TOKEN_TEST'] })]);
    const { verdict } = await dispatcher.gateToolCall(beforeEvent());
    expect(verdict).toMatchObject({ outcome: 'control_error', errorCode: 'configuration' });
    expect(received).toHaveLength(0);
  });
});

describe('B2 payloads over the wire', () => {
  it('notifications carry the slimmed result, controls the full one; hookId/hookType added; no mock', async () => {
    registry.register('op-1', [
      { id: 'notify', type: 'afterToolCall', webhook: { url: `${base}/notify` } },
      control('afterToolCall', '/allow', 'continue'),
    ]);
    await dispatcher.gateToolResult(afterEvent());
    const [notification, controlRequest] = received.map((r) => JSON.parse(r.body) as Record<string, { data?: unknown } & Record<string, unknown>>);
    expect(notification!.hookId).toBe('notify');
    expect(notification!.hookType).toBe('afterToolCall');
    expect(notification!.result).toEqual({ content: 'file contents', success: true });
    expect(controlRequest!.result).toEqual({ content: 'file contents', success: true, data: { raw: 'x'.repeat(100) } });
    expect('mock' in controlRequest!).toBe(false);
  });
});

describe('signing', () => {
  it('every webhook carries Standard Webhooks headers a receiver verifies over the exact bytes', async () => {
    await moduleRef.close();
    const secret = `whsec_${Buffer.from('a-test-signing-key-of-32-bytes!!').toString('base64')}`;
    await boot({ signingSecret: secret });
    await verdictFor('beforeToolCall', [control('beforeToolCall', '/allow', 'block')]);
    const request = received[0]!;
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(() => new Webhook(secret).verify(request.body, headers)).not.toThrow();
    expect(() => new Webhook(secret).verify(`${request.body} `, headers)).toThrow();
  });
});

describe('D2/D3 queue delivery and fallback', () => {
  const event = { id: 'e', type: 'onComplete', operationId: 'op-1', agentId: 'a', stepIndex: 0, timestamp: '', reason: 'done' } as const;

  it('D3: queue delivery enqueues templates, not resolved secrets', async () => {
    registry.register('op-1', [{ id: 'q', type: 'onComplete', webhook: { url: `${base}/notify`, delivery: 'queue', headers: { 'x-token': '${QUEUE_TOKEN_TEST}' }, allowedEnvVars: ['QUEUE_TOKEN_TEST'] } }]);
    process.env.QUEUE_TOKEN_TEST = 'queue-secret';
    try {
      await dispatcher.dispatch('onComplete', event);
    } finally {
      delete process.env.QUEUE_TOKEN_TEST;
    }
    expect(queued).toHaveLength(1);
    expect(queued[0]!.headers).toEqual({ 'x-token': '${QUEUE_TOKEN_TEST}' });
    expect(JSON.stringify(queued[0])).not.toContain('queue-secret');
    expect(received).toHaveLength(0);
  });

  it('D3: a failed enqueue falls back to one direct post by default', async () => {
    queueFails = true;
    registry.register('op-1', [{ id: 'q', type: 'onComplete', webhook: { url: `${base}/notify`, delivery: 'queue' } }]);
    await dispatcher.dispatch('onComplete', event);
    expect(received.map((r) => r.path)).toEqual(['/notify']);
  });

  it("D2/D3: fallback 'none' never posts directly; the failure surfaces as CriticalHookDeliveryError after siblings ran", async () => {
    queueFails = true;
    registry.register('op-1', [
      { id: 'q', type: 'onComplete', webhook: { url: `${base}/notify`, delivery: 'queue', fallback: 'none' } },
      { id: 'direct-fail', type: 'onComplete', webhook: { url: `${base}/notify-fail`, fallback: 'none' } },
      { id: 'sibling', type: 'onComplete', webhook: { url: `${base}/notify` } },
    ]);
    const error = await dispatcher.dispatch('onComplete', event).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CriticalHookDeliveryError);
    expect((error as CriticalHookDeliveryError).failures.map((f) => f.hookId)).toEqual(['q', 'direct-fail']);
    expect(received.map((r) => r.path)).toEqual(['/notify-fail', '/notify']);
  });

  it('W7: a notification receiver answering 200 with a body is a success; 503 is logged, not thrown', async () => {
    registry.register('op-1', [
      { id: 'ok', type: 'onComplete', webhook: { url: `${base}/notify` } },
      { id: 'fails', type: 'onComplete', webhook: { url: `${base}/notify-fail` } },
    ]);
    await expect(dispatcher.dispatch('onComplete', event)).resolves.toBeUndefined();
    expect(outcomes.map((o) => [o.hookId, o.outcome, o.errorCode])).toEqual([
      ['ok', 'ok', undefined],
      ['fails', 'error', 'http_error'],
    ]);
  });
});

describe('SSRF guard on hook webhooks', () => {
  it('a module without an allow-list refuses the loopback receiver before connecting', async () => {
    const plain = await Test.createTestingModule({ imports: [AgentHooksModule.forRoot({ configFile: false })] }).compile();
    await plain.init();
    try {
      const before = received.length;
      plain.get(HookRegistry).register('op-x', [control('beforeToolCall', '/allow', 'block')]);
      const { verdict } = await plain.get(HookDispatcher).gateToolCall(beforeEvent('op-x'));
      expect(verdict).toMatchObject({ outcome: 'control_error', errorCode: 'network_error' });
      expect(received.length).toBe(before);
    } finally {
      await plain.close();
    }
  });
});
