// Registers and unregisters 100,000 operations' caller hooks (and dispatches once for each), then measures
// what stays on the heap. Then (issue 13, DESIGN §4: events instead of polling) starts 10,000 operations
// that each wait for an approval in this process, their `done` pending, and counts the timers alive and the
// heap they hold.
//   npm run bench:memory   → last line `RESULT memory growth-mb=<n> waiting-timers=<n> waiting-heap-kb=<n>`
//   (goals: growth < 5; waiting-timers 0 — no timer per waiting operation, only shared ones).
import 'reflect-metadata';
import { createHook } from 'node:async_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentHooksModule, AgentRuntime, HookDispatcher, HookRegistry, Tool } from '../dist/index.js';

const OPERATIONS = Number(process.env.BENCH_OPERATIONS ?? 100_000);
const WAITING = Number(process.env.BENCH_WAITING ?? 10_000);
if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc (npm run bench:memory does)');

function heapMb() {
  global.gc();
  global.gc();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

class BenchModule {}
Module({ imports: [AgentHooksModule.forRoot({ configFile: false })] })(BenchModule);
const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
await app.init();
const registry = app.get(HookRegistry);
const dispatcher = app.get(HookDispatcher);

async function cycle(operationId) {
  registry.register(operationId, [
    { id: 'step', type: 'afterStep', handler: () => undefined },
    { id: 'tools', type: 'afterToolCall', matcher: '^fs/', handler: () => undefined },
    { id: 'audit', type: 'onComplete', webhook: { url: 'https://hooks.example.com/audit', headers: { Authorization: 'Bearer ${HOOK_TOKEN}' }, allowedEnvVars: ['HOOK_TOKEN'] } },
  ]);
  await dispatcher.dispatch('afterStep', { id: `e-${operationId}`, type: 'afterStep', operationId, agentId: 'a', stepIndex: 0, timestamp: '', content: '', toolCalls: [], toolResults: [], usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
  registry.unregister(operationId);
}

// Warm up so lazily created structures (JIT, maps' first growth) are not counted as growth.
for (let i = 0; i < 2_000; i++) await cycle(`warm-${i}`);
const before = heapMb();
const started = performance.now();
for (let i = 0; i < OPERATIONS; i++) await cycle(`op-${i}`);
const elapsed = performance.now() - started;
const after = heapMb();
await app.close();
if (registry.operationCount !== 0) throw new Error(`registry still holds ${registry.operationCount} operations`);
console.log(`${OPERATIONS} operations registered, dispatched and unregistered in ${elapsed.toFixed(0)} ms; heap ${before.toFixed(1)} MB → ${after.toFixed(1)} MB`);

// --- Waiting operations. Every timer alive is counted, unref'd ones too (getActiveResourcesInfo leaves those out).
const liveTimers = new Set();
createHook({
  init(id, type) {
    if (type === 'Timeout') liveTimers.add(id);
  },
  destroy(id) {
    liveTimers.delete(id);
  },
}).enable();
const refTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-bench-memory-'));
const file = join(dir, 'waiting.sqlite');
writeFileSync(
  join(dir, 'agents.yaml'),
  'system: bench\nmodels:\n  asking:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n' +
    '      - toolCalls: [ { identifier: bench, apiName: work, args: {} } ]\n      - content: "done"\n' +
    'agents:\n  asking: { model: asking, tools: [ "bench/*" ], approval: [ "^bench/" ] }\n',
);
class BenchTools {
  work() {
    return 'ok';
  }
}
Tool({ identifier: 'bench', apiName: 'work', description: 'needs an approval', parameters: { type: 'object', properties: {} } })(
  BenchTools.prototype,
  'work',
  Object.getOwnPropertyDescriptor(BenchTools.prototype, 'work'),
);
Injectable()(BenchTools);
class WaitingModule {}
Module({ imports: [AgentHooksModule.forRoot({ database: `sqlite:${file}`, configFile: join(dir, 'agents.yaml') })], providers: [BenchTools] })(WaitingModule);
const waitingApp = await NestFactory.createApplicationContext(WaitingModule, { logger: false });
await waitingApp.init();
const runtime = waitingApp.get(AgentRuntime);
const pending = [];
let peek;

/** Starts `count` operations and returns once every one of them waits for its approval. */
async function startWaiting(count, tag) {
  for (let i = 0; i < count; i++) {
    const { done } = await runtime.execAgent({ agentId: 'asking', prompt: `${tag} ${i}` });
    done.catch(() => undefined); // rejects at shutdown, after the measurement
    pending.push(done);
  }
  peek ??= new Database(file, { readonly: true, fileMustExist: true });
  const waiting = peek.prepare("SELECT count(*) AS n FROM agent_hooks_operations WHERE status = 'waiting'");
  const completed = peek.prepare("SELECT count(*) AS n FROM agent_hooks_operations WHERE status = 'completed'");
  while (waiting.get().n < pending.length) {
    if (completed.get().n > 0) throw new Error('an operation completed instead of waiting for its approval');
    await sleep(20);
  }
}

/** Live timers once the transient ones (a flush, a pool's idle timer) have run out. */
async function settledTimers() {
  await sleep(1_000);
  return liveTimers.size;
}

// A few first, so every shared timer (reconciler, safety re-check, timeline flush) exists in the baseline.
await startWaiting(100, 'warm');
const timersBefore = await settledTimers();
const refBefore = refTimers();
const heapBefore = heapMb();
const waitStarted = performance.now();
await startWaiting(WAITING, 'wait');
const waitElapsed = performance.now() - waitStarted;
const timersAfter = await settledTimers();
const refAfter = refTimers();
const heapAfter = heapMb();
const waitingTimers = timersAfter - timersBefore;
const heapPerWaitingKb = ((heapAfter - heapBefore) * 1024) / WAITING;
console.log(
  `${WAITING} operations waiting for an approval (done pending), started in ${waitElapsed.toFixed(0)} ms: ` +
    `timers alive ${timersBefore} → ${timersAfter} (keeping the process alive: ${refBefore} → ${refAfter}); ` +
    `heap ${heapBefore.toFixed(1)} MB → ${heapAfter.toFixed(1)} MB (${heapPerWaitingKb.toFixed(2)} KB per waiting operation)`,
);
peek?.close();
await waitingApp.close();
rmSync(dir, { recursive: true, force: true });
console.log(`RESULT memory growth-mb=${(after - before).toFixed(2)} waiting-timers=${waitingTimers} waiting-heap-kb=${heapPerWaitingKb.toFixed(2)}`);
