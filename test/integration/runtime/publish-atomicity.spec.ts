/**
 * SPEC P1/P6 "atomic publish and rollback", at runtime level: a real run whose step commit fails after its
 * production statement that writes the message ran, before that commit's transaction commits (the
 * `StatementFailpoint` wrapper around the stores' SQL session: the UPDATE and the INSERT have both run on
 * SQLite; PostgreSQL's one statement has run whole). Whatever result control decided, nothing of the failed
 * commit is visible — no message row, no version or step change — and the operation ends with reason
 * `error`, `onError` carrying the failure. On a SQLite file and on PostgreSQL.
 */
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AfterToolCallEvent, OnErrorEvent } from '../../../src/index.js';
import type { SqlStatement } from '../../../src/persistence/sql-session.js';
import { Tool } from '../../../src/runtime/tools/tool.decorator.js';
import { insertsMessage, StatementFailpoint, stepCommitOf } from '../persistence/statement-failpoint.js';
import { DATABASE_URL, driverSuites, postgresDatabaseOption, uniqueSchemaName } from '../persistence/test-databases.js';
import { bootRuntime, guardUnhandledRejections, pointsOf, rejectionOf, TERMINAL_POINTS, within, type RuntimeApp } from './runtime-test-kit.js';
import { answer, call, scriptedConfig, toolCalls } from '../../support/scripted-config.js';

// A driver that does not answer shows as skipped tests (a failure under CI=true).
const describeEachDriver = await driverSuites();

const CONFIG = scriptedConfig({
  system: 'publish-atomicity-test',
  models: {
    default: { script: [toolCalls(call('clock/now')), answer('It is {{lastToolResult}}.')], costPerTokenUsd: 0.001 },
  },
  agents: {
    assistant: { model: 'default', tools: ['clock/now'] },
  },
});

class InjectedCommitFailure extends Error {
  override readonly name = 'InjectedCommitFailure';
}

let clockRuns = 0;

@Injectable()
class Clock {
  @Tool({ identifier: 'clock', apiName: 'now', description: 'time', parameters: { type: 'object', properties: {} } })
  now(): string {
    clockRuns++;
    return '2026-11-30T00:00:00Z';
  }
}

/** Fails the next statement that `matches`, after it ran; remembers the step commit it interrupted. */
class FailNextCommit extends StatementFailpoint {
  readonly failed: { operationId: string; expectedVersion: number }[] = [];

  set matches(matches: ((statement: SqlStatement) => boolean) | undefined) {
    this.afterStatement = matches
      ? (statement, unit) => {
          if (!matches(statement)) return;
          this.clear();
          // Its guard is in the same unit, or the commit's writes were split (and the test fails here).
          const commit = stepCommitOf(unit);
          if (!commit) throw new Error("the failed statement's unit holds no step commit guard: the commit's writes are not one unit");
          this.failed.push(commit);
          throw new InjectedCommitFailure('injected failure after the message write, before its commit');
        }
      : undefined;
  }
}

/**
 * A step commit's statement that writes a message of `role` — the commit's last write — not an operation's
 * creation (its agent may be called so). Failing after the last write catches a commit whose writes are
 * not one unit: the earlier units stay committed.
 */
const carries = (role: 'assistant' | 'tool') => (statement: SqlStatement) =>
  insertsMessage(statement, role) && !/INSERT INTO \S*"agent_hooks_operations"/.test(statement.sql);

guardUnhandledRejections();

describeEachDriver('P1/P6 atomic publish and rollback on %s', (driver) => {
  const schema = driver === 'postgres' ? uniqueSchemaName() : undefined;
  let failpoints: FailNextCommit;
  let app: RuntimeApp;

  beforeAll(async () => {
    failpoints = new FailNextCommit();
    app = await bootRuntime({
      observe: true,
      config: CONFIG,
      providers: [Clock],
      wrapSession: failpoints.wrap,
      ...(schema ? { database: postgresDatabaseOption(schema) } : {}),
    });
  }, 30_000);

  afterAll(async () => {
    await app?.close();
    if (!schema) return;
    const admin = await new DataSource({ type: 'postgres', url: DATABASE_URL, poolSize: 1 }).initialize();
    try {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await admin.destroy();
    }
  }, 30_000);

  beforeEach(() => {
    clockRuns = 0;
    failpoints.failed.length = 0;
  });

  it('P1: a failure between control and write publishes nothing; the run ends with reason error and onError carries the failure', async () => {
    const onError: OnErrorEvent[] = [];
    const observed: AfterToolCallEvent[] = [];
    failpoints.matches = carries('tool');
    const { operationId, done } = await app.runtime.execAgent({
      agentId: 'assistant',
      prompt: 'What time is it?',
      hooks: [
        { id: 'watch', type: 'afterToolCall', handler: (event) => void observed.push(event) },
        { id: 'errors', type: 'onError', handler: (event) => void onError.push(event) },
      ],
    });
    const result = await within(done, 'done', 20_000);
    expect(result).toMatchObject({ operationId, status: 'completed', reason: 'error' });

    // Result control finished (the tool ran, afterToolCall saw the result); only the write failed.
    expect(clockRuns).toBe(1);
    expect(observed.map((e) => e.result.content)).toEqual(['2026-11-30T00:00:00Z']);
    expect(failpoints.failed).toHaveLength(1);
    const failed = failpoints.failed[0]!;

    // Nothing of the failed commit is visible: no tool row, and the only version bump after it is the
    // terminal transition's (OperationStore.complete bumps once); the step index never moved.
    const messages = await app.store.messages(operationId);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(messages.some((m) => m.toolCallId === messages[1]!.toolCalls![0]!.id)).toBe(false);
    const operation = await app.store.getOperation(operationId);
    expect(operation).toMatchObject({ status: 'completed', reason: 'error', stepIndex: 0, errorType: 'InjectedCommitFailure' });
    expect(operation!.version).toBe(failed.expectedVersion + 1);

    expect(onError).toEqual([expect.objectContaining({ type: 'onError', operationId, errorType: 'InjectedCommitFailure' })]);
    expect(onError[0]!.errorMessage).toContain('injected failure');
    const points = pointsOf(app.events, operationId);
    expect(points).not.toContain('afterStep');
    expect(pointsOf(app.events, operationId, TERMINAL_POINTS)).toEqual(['onError', 'onComplete', 'on_run_error']);
    expect(app.registry.operationCount).toBe(0);
  });

  it("P1: a failed step commit leaves neither the model's answer nor its usage; run() rejects with the original error", async () => {
    failpoints.matches = carries('assistant');
    const error = await rejectionOf(within(app.runtime.run('What time is it?', { agentId: 'assistant' }), 'run', 20_000));
    expect(error).toBeInstanceOf(InjectedCommitFailure);
    expect(failpoints.failed).toHaveLength(1);
    const { operationId } = failpoints.failed[0]!;

    expect(clockRuns).toBe(0);
    expect((await app.store.messages(operationId)).map((m) => m.role)).toEqual(['user']);
    const operation = await app.store.getOperation(operationId);
    expect(operation).toMatchObject({ reason: 'error', stepIndex: 0, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
    expect(operation!.version).toBe(failpoints.failed[0]!.expectedVersion + 1);
  });

  it('the failpoints stay out of the way of other runs: the same app completes a run normally', async () => {
    const result = await within(app.runtime.run('What time is it?', { agentId: 'assistant' }), 'run', 20_000);
    expect(result).toMatchObject({ reason: 'done', content: 'It is 2026-11-30T00:00:00Z.' });
    expect(failpoints.failed).toEqual([]);
  });
});
