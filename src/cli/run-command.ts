/**
 * `agentctl run <agentId> "<prompt>"`: runs one operation in-process on the configured database and prints
 * the answer as the model writes it (SPEC K5: the operation's deltas), then the outcome and the hook
 * timeline (point, hook, source, outcome, latency — never payloads).
 */
import { NestFactory } from '@nestjs/core';
import { AgentRuntime } from '../runtime/agent-runtime.js';
import { RuntimeDatabase } from '../persistence/runtime-database.js';
import { operationError } from '../runtime/reading/operation-views.js';
import { CliLogger } from './cli-logger.js';
import { RunModule } from './run.module.js';

export interface RunCommandOptions {
  /** `false`: no config file (the module's rule found none). */
  config: string | false;
  plugins?: string;
  database: string;
}

export async function runCommand(agentId: string, prompt: string, options: RunCommandOptions, out: NodeJS.WritableStream): Promise<number> {
  const moduleOptions = { configFile: options.config, database: options.database, ...(options.plugins ? { pluginsFile: options.plugins } : {}) };
  // A failed boot (e.g. a missing plugin method) throws to agentctl, which prints it once and exits 2.
  const app = await NestFactory.createApplicationContext(RunModule.forRoot(moduleOptions), { logger: new CliLogger(), abortOnError: false });
  try {
    const runtime = app.get(AgentRuntime);
    const { operationId, done } = await runtime.execAgent({ agentId, prompt });
    const streamed = printDeltas(runtime, operationId, out);
    const result = await done;
    const printed = streamed.stop();
    const stores = await app.get(RuntimeDatabase).stores();
    await stores.timeline.flush();
    const timeline = await stores.outcomes.listByOperation(operationId);
    const operation = await stores.operations.get(operationId);
    // The answer as published, unless its deltas printed it already (a watcher may miss deltas, never the answer).
    if (printed.last !== result.content) out.write(`${printed.any ? '\n' : ''}${result.content}`);
    out.write('\n\n');
    out.write(`operation ${operationId}: ${result.reason}, ${result.usage.inputTokens + result.usage.outputTokens} tokens, $${result.usage.costUsd.toFixed(4)}\n`);
    // Why it failed, as the API shows it: the type and a summary of our own fields, never a message.
    if (operation?.errorType !== undefined) {
      const error = operationError(operation.errorType, operation.errorSummary);
      out.write(`error: ${error.type}: ${error.summary}\n`);
    }
    out.write('\n');
    out.write(table(['#', 'point', 'hook', 'source', 'outcome', 'ms'], timeline.map((row, i) => [String(i + 1), row.point, row.hookId, row.source, row.errorCode ? `${row.outcome} (${row.errorCode})` : row.outcome, row.latencyMs.toFixed(1)])));
    return result.reason === 'done' ? 0 : 1;
  } finally {
    await app.close();
  }
}

/**
 * Writes each delta as it arrives; `stop()` says whether anything was printed and what the last step that
 * streamed wrote (the final answer, when it streamed whole).
 */
function printDeltas(runtime: AgentRuntime, operationId: string, out: NodeJS.WritableStream): { stop(): { any: boolean; last: string | undefined } } {
  const byStep = new Map<number, string>();
  let lastStep = -1;
  const subscription = runtime.events(operationId).subscribe({
    next: (event) => {
      if (event.type !== 'delta') return;
      // A new step's text starts on a line of its own.
      if (event.stepIndex !== lastStep && lastStep >= 0) out.write('\n');
      lastStep = event.stepIndex;
      byStep.set(event.stepIndex, (byStep.get(event.stepIndex) ?? '') + event.text);
      out.write(event.text);
    },
    // A failed read only loses the live text: the answer is printed from the result.
    error: () => undefined,
  });
  return {
    stop: () => {
      subscription.unsubscribe();
      return { any: byStep.size > 0, last: byStep.get(lastStep) };
    },
  };
}

function table(header: string[], rows: string[][]): string {
  if (rows.length === 0) return '(no hook ran)\n';
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n') + '\n';
}
