// Cost per step (issue 14): 10-step operations (9 no-op tool calls + an answer, scripted model) at 1 and 20
// operations in flight, local mode, on PostgreSQL (own schema) and SQLite (temp file). Per step: SQL
// statements counted at the client (every `pg` Client.query / every better-sqlite3 statement run or exec of
// this process, the lease renewals, the LISTEN connection and the operation's creation and end included,
// divided by the steps), CPU ms of this process (`process.cpuUsage`), operations/s.
// Baseline, same run: the same writes as plain parameterized SQL straight on the drivers (no LangGraph.js:
// it is not a project dependency) — per operation its row and prompt; per step the answer (message +
// usage/version), the tool result (message + version) and the step's end (step index + version), each one
// transaction with its pg_notify on PostgreSQL; the completion. It does no hooks, no model, no tools: it is
// the floor a durable engine writing the same rows can reach, not a peer.
//   npm run bench:step → last line `RESULT step pg-statements=<n> pg-cpu-ms=<n> sqlite-cpu-ms=<n> pg-ops-per-s=<n> …`
// The same runtime with one no-op hook on each model-call point (beforeModelCall, afterModelCall,
// before_model_request, after_model_response: SPEC K1) is measured right after the one without: the
// `…-model-hooks-…` keys, and their ratios to the runtime without model hooks.
// (20 in flight, the workload; BENCH_TRACE=1 lists the PostgreSQL statements per step, BENCH_ONLY=pg|sqlite
// runs our runtime alone, for `node --cpu-prof`).
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Database from 'better-sqlite3';
import pg from 'pg';
import { AgentHooksModule, AgentRuntime, OnHook, Tool } from '../dist/index.js';

const OPS = Number(process.env.BENCH_OPS ?? 100);
const STEPS = 10;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const dir = mkdtempSync(join(tmpdir(), 'agent-hooks-step-bench-'));
const step = '      - toolCalls: [ { identifier: bench, apiName: work, args: { n: 1 } } ]\n';
writeFileSync(
  join(dir, 'agents.yaml'),
  `system: bench\nmodels:\n  ten:\n    provider: scripted\n    costPerTokenUsd: 0\n    script:\n${step.repeat(STEPS - 1)}      - content: "done"\nagents:\n  bench: { model: ten, tools: [ "bench/*" ], limits: { maxSteps: 20 } }\n`,
);

// ---- statements at the client ----
let statements = 0;
// BENCH_TRACE=1: which statements, by their first words (PostgreSQL), printed per measurement.
const trace = process.env.BENCH_TRACE === '1' ? new Map() : undefined;
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  statements++;
  if (trace) {
    const text = (typeof args[0] === 'string' ? args[0] : (args[0]?.text ?? '')).replace(/\s+/g, ' ').slice(0, 60);
    const seen = trace.get(text) ?? { n: 0, ms: 0 };
    seen.n++;
    trace.set(text, seen);
    const started = performance.now();
    const result = clientQuery.apply(this, args);
    if (result && typeof result.then === 'function') result.then(() => (seen.ms += performance.now() - started), () => undefined);
    return result;
  }
  return clientQuery.apply(this, args);
};
const probe = new Database(':memory:');
const statementProto = Object.getPrototypeOf(probe.prepare('SELECT 1'));
for (const method of ['run', 'get', 'all', 'iterate']) {
  const original = statementProto[method];
  statementProto[method] = function countedStatement(...args) {
    statements++;
    return original.apply(this, args);
  };
}
const databaseProto = Object.getPrototypeOf(probe);
const exec = databaseProto.exec;
databaseProto.exec = function countedExec(...args) {
  statements++;
  return exec.apply(this, args);
};
probe.close();

function decorate(cls, name, decorator) {
  decorator(cls.prototype, name, Object.getOwnPropertyDescriptor(cls.prototype, name));
}
class BenchTools {
  work() {
    return 'ok';
  }
}
decorate(BenchTools, 'work', Tool({ identifier: 'bench', apiName: 'work', description: 'no-op', parameters: { type: 'object', properties: { n: { type: 'number' } } } }));
Injectable()(BenchTools);

/** One no-op hook on each model-call point that a step fires (K1); `onModelCallError` never fires here. */
const MODEL_POINTS = ['before_model_request', 'beforeModelCall', 'after_model_response', 'afterModelCall'];
let modelHookCalls = 0;
class NoopModelHooks {}
for (const point of MODEL_POINTS) {
  NoopModelHooks.prototype[point] = () => {
    modelHookCalls++;
  };
  decorate(NoopModelHooks, point, OnHook(point));
}
Injectable()(NoopModelHooks);

/** Runs `ops` operations, `inFlight` at a time, through `runOne`; what it cost per step. */
async function measure(ops, inFlight, runOne) {
  let next = 0;
  const startStatements = statements;
  trace?.clear();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < ops) {
        next++;
        await runOne();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const steps = ops * STEPS;
  if (trace?.size) for (const [text, { n, ms }] of [...trace].sort((a, b) => b[1].n - a[1].n)) console.log(`  ${(n / steps).toFixed(2)}  ${(ms / n).toFixed(2)} ms  ${text}`);
  return { statements: (statements - startStatements) / steps, cpuMs: (used.user + used.system) / 1000 / steps, opsPerS: ops / seconds };
}

async function ours(database, { modelHooks = false } = {}) {
  class BenchModule {}
  Module({ imports: [AgentHooksModule.forRoot({ database, configFile: join(dir, 'agents.yaml') })], providers: modelHooks ? [BenchTools, NoopModelHooks] : [BenchTools] })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: false });
  await app.init();
  const runtime = app.get(AgentRuntime);
  const runOne = async () => {
    const result = await runtime.run('go', { agentId: 'bench' });
    if (result.content !== 'done') throw new Error(`unexpected answer: ${result.reason}`);
  };
  return { runOne, close: () => app.close() };
}

// ---- the plain-SQL baseline ----
const BASELINE_DDL = [
  'CREATE TABLE ops (id varchar(36) PRIMARY KEY, status varchar(16) NOT NULL, step_index integer NOT NULL, version integer NOT NULL, message_seq integer NOT NULL, input_tokens integer NOT NULL, output_tokens integer NOT NULL, run_context text NOT NULL, updated_at varchar(32) NOT NULL)',
  'CREATE TABLE msgs (id varchar(36) PRIMARY KEY, operation_id varchar(36) NOT NULL, seq integer NOT NULL, role varchar(16) NOT NULL, content text NOT NULL, tool_calls text, tool_call_id varchar(255), created_at varchar(32) NOT NULL)',
  'CREATE UNIQUE INDEX msgs_seq ON msgs (operation_id, seq)',
];
const UPDATE_OP = (set) => `UPDATE ops SET ${set}, version = version + 1, updated_at = $2 WHERE id = $1 AND version = $3 RETURNING version, message_seq, status`;
const INSERT_MSG = 'INSERT INTO msgs (id, operation_id, seq, role, content, tool_calls, tool_call_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)';

/** One operation of the baseline: `commit(updateSql, params, message?)` is one transaction. */
async function baselineOperation(begin, commit) {
  const id = randomUUID();
  let version = await begin(id);
  for (let index = 0; index < STEPS; index++) {
    const last = index === STEPS - 1;
    const callId = `call_${randomUUID()}`;
    const toolCalls = last ? null : JSON.stringify([{ id: callId, identifier: 'bench', apiName: 'work', args: { n: 1 } }]);
    version = await commit(id, version, 'message_seq = message_seq + 1, input_tokens = input_tokens + $4, output_tokens = output_tokens + $5', [1, 1], { role: 'assistant', content: last ? 'done' : '', toolCalls });
    if (!last) version = await commit(id, version, 'message_seq = message_seq + 1', [], { role: 'tool', content: 'ok', toolCallId: callId });
    version = await commit(id, version, 'step_index = step_index + 1', [], undefined);
  }
  await commit(id, version, "status = 'completed'", [], undefined);
}

async function pgBaseline(schema) {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
  const setup = await pool.connect();
  await setup.query(`CREATE SCHEMA "${schema}"`);
  await setup.query(`SET search_path TO "${schema}"`);
  for (const ddl of BASELINE_DDL) await setup.query(ddl);
  setup.release();
  pool.on('connect', (client) => void client.query(`SET search_path TO "${schema}"`));
  await Promise.all(Array.from({ length: 10 }, async () => (await pool.connect()).release())); // warm connections
  const now = () => new Date().toISOString();
  const notify = (client, id, version, status) => client.query('SELECT pg_notify($1, $2)', ['bench_events', JSON.stringify({ origin: 'bench', events: [{ operationId: id, kind: 'status', status, version }] })]);
  const begin = async (id) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query("INSERT INTO ops VALUES ($1, 'running', 0, 1, 1, 0, 0, '{}', $2)", [id, now()]);
      await client.query(INSERT_MSG, [randomUUID(), id, 1, 'user', 'go', null, null, now()]);
      await notify(client, id, 1, 'running');
      await client.query('COMMIT');
      return 1;
    } finally {
      client.release();
    }
  };
  const commit = async (id, version, set, extra, message) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(UPDATE_OP(set), [id, now(), version, ...extra]);
      if (rows.length !== 1) throw new Error('baseline: version moved');
      if (message) await client.query(INSERT_MSG, [randomUUID(), id, rows[0].message_seq, message.role, message.content, message.toolCalls ?? null, message.toolCallId ?? null, now()]);
      await notify(client, id, rows[0].version, rows[0].status);
      await client.query('COMMIT');
      return rows[0].version;
    } finally {
      client.release();
    }
  };
  return { runOne: () => baselineOperation(begin, commit), close: () => pool.end() };
}

function sqliteBaseline(file) {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  for (const ddl of BASELINE_DDL) db.exec(ddl);
  const now = () => new Date().toISOString();
  const insertOp = db.prepare("INSERT INTO ops VALUES (?, 'running', 0, 1, 1, 0, 0, '{}', ?)");
  const insertMsg = db.prepare(INSERT_MSG.replace(/\$\d/g, '?'));
  const updates = new Map();
  const begin = async (id) => {
    db.transaction(() => {
      insertOp.run(id, now());
      insertMsg.run(randomUUID(), id, 1, 'user', 'go', null, null, now());
    })();
    return 1;
  };
  const commit = async (id, version, set, extra, message) => {
    let update = updates.get(set);
    // Named parameters: better-sqlite3 takes `?NNN` as positions only in order.
    if (!update) updates.set(set, (update = db.prepare(UPDATE_OP(set).replace(/\$(\d)/g, '@p$1'))));
    const params = Object.fromEntries([id, now(), version, ...extra].map((value, index) => [`p${index + 1}`, value]));
    return db.transaction(() => {
      const row = update.get(params);
      if (!row) throw new Error('baseline: version moved');
      if (message) insertMsg.run(randomUUID(), id, row.message_seq, message.role, message.content, message.toolCalls ?? null, message.toolCallId ?? null, now());
      return row.version;
    })();
  };
  return { runOne: () => baselineOperation(begin, commit), close: () => db.close() };
}

async function dropSchema(schema) {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}

/** Warm-up, then 1 and 20 in flight. */
async function run(label, subject) {
  await measure(Math.min(30, OPS), 5, subject.runOne); // warm-up: JIT, pools, prepared statements
  const c1 = await measure(Math.max(5, Math.floor(OPS / 3)), 1, subject.runOne);
  const c20 = await measure(OPS, 20, subject.runOne);
  await subject.close();
  for (const [inFlight, m] of [[1, c1], [20, c20]]) {
    console.log(`${label.padEnd(16)} ${String(inFlight).padStart(2)} in flight: ${m.statements.toFixed(2)} statements/step  ${m.cpuMs.toFixed(3)} ms CPU/step  ${m.opsPerS.toFixed(1)} operations/s`);
  }
  return { c1, c20 };
}

const stamp = Date.now().toString(36);
const pgSchema = `agent_hooks_step_bench_${stamp}`;
const pgHooksSchema = `agent_hooks_step_hooks_${stamp}`;
const pgBaseSchema = `agent_hooks_step_base_${stamp}`;
let pgOurs;
let pgBase;
let sqliteOurs;
let sqliteBase;
let pgHooks;
let sqliteHooks;
try {
  const pgUrl = new URL(DATABASE_URL);
  pgUrl.searchParams.set('schema', pgSchema);
  // BENCH_ONLY=pg or sqlite: our runtime on that database alone (for `node --cpu-prof`); no RESULT line.
  const only = process.env.BENCH_ONLY;
  if (only === 'pg') await run('ours pg', await ours(pgUrl.toString()));
  if (only === 'sqlite') await run('ours sqlite', await ours(`sqlite:${join(dir, 'ours.sqlite')}`));
  if (only === undefined) {
    const pgHooksUrl = new URL(pgUrl);
    pgHooksUrl.searchParams.set('schema', pgHooksSchema);
    pgOurs = await run('ours pg', await ours(pgUrl.toString()));
    pgHooks = await run('ours pg +model', await ours(pgHooksUrl.toString(), { modelHooks: true }));
    pgBase = await run('plain-sql pg', await pgBaseline(pgBaseSchema));
    sqliteOurs = await run('ours sqlite', await ours(`sqlite:${join(dir, 'ours.sqlite')}`));
    const callsBefore = modelHookCalls;
    sqliteHooks = await run('ours sqlite +model', await ours(`sqlite:${join(dir, 'hooks.sqlite')}`, { modelHooks: true }));
    sqliteBase = await run('plain-sql sqlite', sqliteBaseline(join(dir, 'base.sqlite')));
    // Each model call of the SQLite pass (warm-up, 1 and 20 in flight) went through the four hooks.
    const sqliteCalls = Math.min(30, OPS) + Math.max(5, Math.floor(OPS / 3)) + OPS;
    if (modelHookCalls - callsBefore !== sqliteCalls * STEPS * MODEL_POINTS.length) throw new Error(`expected ${sqliteCalls * STEPS * MODEL_POINTS.length} model hook calls, saw ${modelHookCalls - callsBefore}`);
  }
} finally {
  await dropSchema(pgSchema).catch(() => undefined);
  await dropSchema(pgHooksSchema).catch(() => undefined);
  await dropSchema(pgBaseSchema).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}

if (process.env.BENCH_ONLY !== undefined) process.exit(0);
// The RESULT is the workload: 20 operations in flight (the lines above give 1 in flight too).
const pgStatements = pgOurs.c20.statements;
const pgCpu = pgOurs.c20.cpuMs;
const sqliteCpu = sqliteOurs.c20.cpuMs;
const pgOps = pgOurs.c20.opsPerS;
console.log(
  `vs plain SQL (same run, 20 in flight): pg CPU/step ${(pgCpu / pgBase.c20.cpuMs).toFixed(2)}×  pg operations/s ${(pgOps / pgBase.c20.opsPerS).toFixed(2)}×  sqlite CPU/step ${(sqliteCpu / sqliteBase.c20.cpuMs).toFixed(2)}×`,
);
console.log(
  `one no-op hook on each model-call point vs none (same run, 20 in flight): pg statements/step ${pgHooks.c20.statements.toFixed(2)} vs ${pgStatements.toFixed(2)}  pg CPU/step ${(pgHooks.c20.cpuMs / pgCpu).toFixed(2)}×  sqlite CPU/step ${(sqliteHooks.c20.cpuMs / sqliteCpu).toFixed(2)}×`,
);
console.log(
  `RESULT step pg-statements=${pgStatements.toFixed(2)} pg-cpu-ms=${pgCpu.toFixed(3)} sqlite-cpu-ms=${sqliteCpu.toFixed(3)} pg-ops-per-s=${pgOps.toFixed(1)} pg-ops-vs-plain-sql=${(pgOps / pgBase.c20.opsPerS).toFixed(2)}` +
    ` pg-model-hooks-statements=${pgHooks.c20.statements.toFixed(2)} pg-model-hooks-cpu-ms=${pgHooks.c20.cpuMs.toFixed(3)} sqlite-model-hooks-cpu-ms=${sqliteHooks.c20.cpuMs.toFixed(3)}` +
    ` pg-model-hooks-cpu-ratio=${(pgHooks.c20.cpuMs / pgCpu).toFixed(2)} sqlite-model-hooks-cpu-ratio=${(sqliteHooks.c20.cpuMs / sqliteCpu).toFixed(2)}`,
);
