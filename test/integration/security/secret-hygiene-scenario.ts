/**
 * The secret-hygiene scenario (SPEC S1–S3, E9, B2; DESIGN §5), run once for real: a SQLite file, real
 * loopback webhook receivers (SSRF allow-list 127.0.0.0/8), Standard Webhooks signing, and the fixtures'
 * markers. Operation 1 runs a tool with notifications, an afterToolCall control and engine observe hooks;
 * operation 2 has a tool that throws, then a provider error that echoes the conversation, so the run ends
 * in `on_run_error`; a third, through `run()`, shows which error the caller gets.
 * Output is captured from the first line of boot to the last line of shutdown; the database is dumped after.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AgentHooksModule, HookDispatcher, type HookOutcomeRecord } from '../../../src/index.js';
import { AGENT_DIRECTORY } from '../../../src/runtime/agent-directory.port.js';
import { ConfigAgentDirectory } from '../../../src/config/config-agent-directory.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { startReceiver, type RecordedRequest } from '../../unit/webhooks/loopback-receiver.js';
import { dumpSqlite, type DatabaseDump } from './database-dump.js';
import { captureOutput } from './output-capture.js';
import { CONFIG, EngineObservers, MARKERS, VaultTools, callerHooks, context, hostDirectory, observed, runErrors, type ObservedInvocation } from './secret-hygiene-fixtures.js';

export interface ScenarioResult {
  readonly lookupOperationId: string;
  readonly failedOperationId: string;
  /** What `run()` rejected with on the third operation. */
  readonly runRejection: unknown;
  readonly lines: readonly string[];
  readonly dump: DatabaseDump;
  readonly outcomes: readonly HookOutcomeRecord[];
  readonly observed: readonly ObservedInvocation[];
  readonly runErrors: ReadonlyArray<{ type: string; raw: unknown }>;
  readonly notifications: readonly RecordedRequest[];
  readonly controls: readonly RecordedRequest[];
}

/** Answers once the request body has arrived (so the receiver has recorded it). */
function answer(status: number, body?: string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    req.on('end', () => res.writeHead(status, body ? { 'content-type': 'application/json' } : {}).end(body));
  };
}

export async function runScenario(): Promise<ScenarioResult> {
  observed.length = 0;
  runErrors.length = 0;
  const receiver = await startReceiver({ '/notify': answer(204), '/control': answer(200, '{"decision":"allow"}') });
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-hygiene-'));
  const database = join(dir, 'db.sqlite');
  writeFileSync(join(dir, 'agents.yaml'), CONFIG);
  const capture = captureOutput();
  const previousLogger = (Logger as unknown as { staticInstanceRef?: unknown }).staticInstanceRef;
  const outcomes: HookOutcomeRecord[] = [];
  process.env.HOOK_TOKEN = MARKERS.env;
  capture.start();
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [
        AgentHooksModule.forRoot({
          database: `sqlite:${database}`,
          configFile: join(dir, 'agents.yaml'),
          webhooks: { allowNetworks: ['127.0.0.0/8'], signingSecret: MARKERS.signing },
        }),
      ],
      providers: [VaultTools, EngineObservers],
    })
      .overrideProvider(AGENT_DIRECTORY)
      .useFactory({ factory: hostDirectory, inject: [ConfigAgentDirectory] })
      .compile();
    moduleRef.useLogger(capture.logger);
    await moduleRef.init();
    let ids = { lookup: '', failed: '' };
    let runRejection: unknown;
    try {
      moduleRef.get(HookDispatcher).outcomes$.subscribe((record) => outcomes.push(record));
      const runtime = moduleRef.get(AgentRuntime);
      const lookup = await runtime.execAgent({ agentId: 'auditor', prompt: `Find ${MARKERS.prompt}`, hooks: callerHooks(receiver, 'op1'), context: context() });
      await lookup.done;
      const failed = await runtime.execAgent({ agentId: 'breaker', prompt: `Break ${MARKERS.prompt}`, hooks: callerHooks(receiver, 'op2'), context: context() });
      await failed.done;
      ids = { lookup: lookup.operationId, failed: failed.operationId };
      runRejection = await runtime.run(`Again ${MARKERS.prompt}`, { agentId: 'breaker', context: context() }).then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      await moduleRef.close();
    }
    capture.stop();
    return {
      lookupOperationId: ids.lookup,
      failedOperationId: ids.failed,
      runRejection,
      lines: capture.lines,
      dump: await dumpSqlite(database),
      outcomes,
      observed: [...observed],
      runErrors: [...runErrors],
      notifications: receiver.requests.filter((r) => r.path === '/notify'),
      controls: receiver.requests.filter((r) => r.path === '/control'),
    };
  } finally {
    capture.stop();
    Logger.overrideLogger(previousLogger as never);
    delete process.env.HOOK_TOKEN;
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
