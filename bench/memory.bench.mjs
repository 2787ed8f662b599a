// Registers and unregisters 100,000 operations' caller hooks (and dispatches once for each), then measures
// what stays on the heap.   npm run bench:memory   → last line `RESULT memory growth-mb=<n>` (goal < 5).
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AgentHooksModule, HookDispatcher, HookRegistry } from '../dist/index.js';

const OPERATIONS = Number(process.env.BENCH_OPERATIONS ?? 100_000);
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
console.log(`RESULT memory growth-mb=${(after - before).toFixed(2)}`);
