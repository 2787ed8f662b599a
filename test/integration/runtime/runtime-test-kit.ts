/**
 * Shared boot and recording helpers for the runtime integration tests: a real AgentHooksModule on a real
 * database (a SQLite file in a temporary folder unless told otherwise) with a temporary agents.yaml, every
 * dispatched point and every outcome record captured, and the log lines kept so tests can check what was
 * (not) logged.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger, type ModuleMetadata, type Provider } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  AgentHooksModule,
  HookDispatcher,
  HookRegistry,
  type AgentHooksModuleOptions,
  type DispatchedEvent,
  type HookOutcomeRecord,
  type HookPoint,
} from '../../../src/index.js';
import { SQL_SESSION_WRAPPER, type SqlSessionWrapper } from '../../../src/persistence/sql-session.js';
import { AgentRuntime } from '../../../src/runtime/agent-runtime.js';
import { RUNTIME_STORE, type RuntimeStore } from '../../../src/runtime/runtime-store.port.js';
import { answer, scriptedConfig } from '../../support/scripted-config.js';

export interface RuntimeApp {
  readonly moduleRef: TestingModule;
  readonly runtime: AgentRuntime;
  readonly store: RuntimeStore;
  readonly dispatcher: HookDispatcher;
  readonly registry: HookRegistry;
  /** The temporary folder holding agents.yaml (and the SQLite file by default). */
  readonly dir: string;
  /** Every dispatched point, in order (observers see events in dispatch order). */
  readonly events: DispatchedEvent[];
  readonly outcomes: HookOutcomeRecord[];
  /** Every line the app logged (warn/error/log), through the app's logger. */
  readonly logLines: string[];
  close(): Promise<void>;
}

export interface BootOptions {
  config: string;
  providers?: Provider[];
  /** Modules of the host app beside AgentHooksModule (e.g. one that owns a DataSource). */
  imports?: ModuleMetadata['imports'];
  /** Default: a SQLite file in the temporary folder. */
  database?: string;
  /** Wraps the stores' SQL session (`StatementFailpoint.wrap`): fail a real run's production statement. */
  wrapSession?: SqlSessionWrapper;
  webhooks?: AgentHooksModuleOptions['webhooks'];
  /** Further module options (queue mode: `mode`, `redis`, `queue`; models given in code: `models`). */
  module?: Pick<AgentHooksModuleOptions, 'mode' | 'redis' | 'queue' | 'shutdown' | 'recovery' | 'tracing' | 'models'>;
  /**
   * Default false: the app runs as a plain host does, where nothing observes a point no hook is registered
   * for (`events` and `outcomes` stay empty). True subscribes to the dispatcher and collects what it announces;
   * a subscriber observes every point, so the run takes the observed path (more writes: see docs/rules.md G2).
   */
  observe?: boolean;
}

export async function bootRuntime(options: BootOptions): Promise<RuntimeApp> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-runtime-'));
  writeFileSync(join(dir, 'agents.yaml'), options.config);
  const logLines: string[] = [];
  const keep = (level: string) => (message: unknown, ...rest: unknown[]) => {
    logLines.push(`${level} ${[message, ...rest].map(String).join(' ')}`);
  };
  const logger = { log: keep('log'), error: keep('error'), warn: keep('warn'), debug: () => undefined, verbose: () => undefined, fatal: keep('fatal') };
  const previous = (Logger as unknown as { staticInstanceRef?: unknown }).staticInstanceRef;
  const builder = Test.createTestingModule({
    imports: [
      ...(options.imports ?? []),
      AgentHooksModule.forRoot({
        database: options.database ?? `sqlite:${join(dir, 'db.sqlite')}`,
        configFile: join(dir, 'agents.yaml'),
        ...(options.webhooks ? { webhooks: options.webhooks } : {}),
        ...options.module,
      }),
    ],
    providers: options.providers ?? [],
  });
  if (options.wrapSession) builder.overrideProvider(SQL_SESSION_WRAPPER).useValue(options.wrapSession);
  const moduleRef = await builder.compile();
  moduleRef.useLogger(logger);
  await moduleRef.init();
  const events: DispatchedEvent[] = [];
  const outcomes: HookOutcomeRecord[] = [];
  const dispatcher = moduleRef.get(HookDispatcher);
  const subscriptions =
    options.observe !== true ? [] : [dispatcher.subscribe((event) => events.push(event)), dispatcher.outcomes$.subscribe((record) => outcomes.push(record))];
  return {
    moduleRef,
    runtime: moduleRef.get(AgentRuntime),
    store: moduleRef.get<RuntimeStore>(RUNTIME_STORE),
    dispatcher,
    registry: moduleRef.get(HookRegistry),
    dir,
    events,
    outcomes,
    logLines,
    close: async () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
      try {
        await moduleRef.close();
      } finally {
        Logger.overrideLogger(previous as never);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** agents.yaml of one agent `assistant` whose scripted model answers "done" at once: a one-step run, free. */
export function oneAnswerConfig(system: string): string {
  return scriptedConfig({
    system: system,
    models: {
      default: [answer('done')],
    },
    agents: {
      assistant: { model: 'default' },
    },
  });
}

export const TERMINAL_POINTS: readonly HookPoint[] = ['onError', 'onComplete', 'on_run_end', 'on_run_error'];

/** The points of one operation, in dispatch order, optionally only some of them. */
export function pointsOf(events: readonly DispatchedEvent[], operationId: string, only?: readonly HookPoint[]): HookPoint[] {
  return events.filter((e) => e.operationId === operationId && (!only || only.includes(e.point))).map((e) => e.point);
}

/** The first event of `point` for the operation (its payload as dispatched). */
export function eventOf(events: readonly DispatchedEvent[], operationId: string, point: HookPoint): DispatchedEvent | undefined {
  return events.find((e) => e.operationId === operationId && e.point === point);
}

export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** What a promise rejects with (fails the test if it resolves). */
export async function rejectionOf(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}

/** Races `work` against a generous deadline so a hang fails with a clear message instead of a Jest timeout. */
export async function within<T>(work: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export { eventually, until } from '../../support/eventually.js';

/**
 * Records unhandled rejections for the whole file and asserts after each test that there were none.
 * Caveat: under Jest 30 the test's `process` is a sandbox copy and jest-circus owns the real process's
 * `unhandledRejection` listeners; it fails the test that owns such a promise itself. This listener is the
 * explicit, runner-independent form of the same guard (it fires where the environment forwards the event).
 */
export function guardUnhandledRejections(): void {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => {
    seen.push(reason);
  };
  beforeAll(() => {
    process.on('unhandledRejection', listener);
  });
  afterEach(() => {
    const found = seen.splice(0);
    expect(found).toEqual([]);
  });
  afterAll(() => {
    process.off('unhandledRejection', listener);
  });
}
