// Dispatch cost, side by side with @nestjs/event-emitter, each call awaited as the runtime awaits it.
//   npm run bench:dispatch
// Prints ns/op for both and, last, `RESULT dispatch no-hook=<x> one-handler=<y> ten-handlers=<z>` (ours/baseline).
// Ours dispatches as a step does: with the environment hooks read once for the step (L1) and passed along;
// that read is timed on its own and printed as `environment read`, once per step, not per dispatch.
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventEmitter2, EventEmitterModule, OnEvent } from '@nestjs/event-emitter';
import { AgentHooksModule, HookDispatcher, OnHook } from '../dist/index.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000);

/** Applies decorators without decorator syntax (this file is plain JS). */
function decorateMethod(cls, name, decorator) {
  const descriptor = Object.getOwnPropertyDescriptor(cls.prototype, name);
  decorator(cls.prototype, name, descriptor);
}

function providersFor(count) {
  const providers = [];
  for (let i = 0; i < count; i++) {
    const Hooks = class {
      calls = 0;
      onStep() {
        this.calls++;
      }
    };
    Object.defineProperty(Hooks, 'name', { value: `BenchHooks${i}` });
    decorateMethod(Hooks, 'onStep', OnHook('afterStep'));
    Injectable()(Hooks);
    const Listener = class {
      calls = 0;
      onStep() {
        this.calls++;
      }
    };
    Object.defineProperty(Listener, 'name', { value: `BenchListener${i}` });
    decorateMethod(Listener, 'onStep', OnEvent('bench.afterStep'));
    Injectable()(Listener);
    providers.push(Hooks, Listener);
  }
  return providers;
}

async function appWith(count) {
  class BenchModule {}
  Module({ imports: [EventEmitterModule.forRoot(), AgentHooksModule.forRoot({ configFile: false })], providers: providersFor(count) })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  await app.init();
  return app;
}

const payload = {
  id: 'evt-1',
  type: 'afterStep',
  operationId: 'op-bench',
  agentId: 'assistant',
  stepIndex: 1,
  timestamp: new Date(0).toISOString(),
  content: 'hello',
  toolCalls: [],
  toolResults: [],
  usage: { inputTokens: 10, outputTokens: 5, costUsd: 0 },
};

async function timeLoop(fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await fn();
  return Number(process.hrtime.bigint() - start) / ITERATIONS;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function compare(label, count) {
  const app = await appWith(count);
  const dispatcher = app.get(HookDispatcher);
  const emitter = app.get(EventEmitter2);
  const options = { environment: dispatcher.environmentSnapshot() };
  const ours = () => dispatcher.dispatch('afterStep', payload, options);
  const baseline = () => emitter.emitAsync('bench.afterStep', payload);
  // Warm both paths so the JIT has settled before measuring.
  await timeLoop(ours);
  await timeLoop(baseline);
  const oursNs = [];
  const baseNs = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order each round so drift on a shared machine hits both sides alike.
    if (round % 2 === 0) {
      oursNs.push(await timeLoop(ours));
      baseNs.push(await timeLoop(baseline));
    } else {
      baseNs.push(await timeLoop(baseline));
      oursNs.push(await timeLoop(ours));
    }
  }
  await app.close();
  const o = median(oursNs);
  const b = median(baseNs);
  const ratio = o / b;
  console.log(`${label.padEnd(14)} ours ${o.toFixed(0).padStart(6)} ns/op   event-emitter ${b.toFixed(0).padStart(6)} ns/op   ratio ${ratio.toFixed(2)}`);
  return ratio;
}

/** What a step pays once for its read of the environment hooks (a `process.env` read, no hook configured). */
async function environmentRead() {
  const app = await appWith(0);
  const dispatcher = app.get(HookDispatcher);
  const ns = [];
  for (let round = 0; round < ROUNDS; round++) ns.push(await timeLoop(() => dispatcher.environmentSnapshot()));
  await app.close();
  const read = median(ns);
  console.log(`environment read, once per step: ${read.toFixed(0)} ns`);
  return read;
}

await environmentRead();
const noHook = await compare('no-hook', 0);
const one = await compare('one-handler', 1);
const ten = await compare('ten-handlers', 10);
console.log(`RESULT dispatch no-hook=${noHook.toFixed(2)} one-handler=${one.toFixed(2)} ten-handlers=${ten.toFixed(2)}`);
