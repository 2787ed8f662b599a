/**
 * Real worker processes for the queue tests: `test/integration/queue/worker-entry.mjs` run by node from the
 * build, each with its own environment. Resolves once the worker says it is ready.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import type { AgentHooksQueueOptions } from '../../../src/agent-hooks.options.js';

const ENTRY = join(dirname(fileURLToPath(import.meta.url)), 'worker-entry.mjs');

export interface WorkerSettings {
  configFile: string;
  database: string;
  redis: string;
  queue: AgentHooksQueueOptions;
  webhooks?: { allowNetworks: string[] };
}

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly output: string[];
  /** Resolves with the exit code (or signal). */
  readonly exited: Promise<number | NodeJS.Signals | null>;
}

export async function startWorker(settings: WorkerSettings, env: Record<string, string> = {}): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [ENTRY], {
    env: { ...process.env, NODE_OPTIONS: '', ...env, AGENT_HOOKS_TEST_WORKER: JSON.stringify(settings) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${output.join('')}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (output.join('').includes('worker ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before it was ready:\n${output.join('')}`));
    });
  });
  await ready;
  return { child, output, exited };
}

export async function stopWorker(worker: WorkerProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | NodeJS.Signals | null> {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null) return worker.exited;
  worker.child.kill(signal);
  return worker.exited;
}
