// The baseline for bench:decisions: a bare Nest app (same framework, same platform-express, same JSON body
// parsing) whose POST /v1/operations/:id/interventions/:toolCallId runs ONE transaction the size of a
// decision's — lock the operation row, compare-and-set the intervention, insert the owed notification, count
// what is still pending, move the operation's status and version, and (PostgreSQL) pg_notify the change —
// then answers 200 { status }. No reads before it, nothing after it.
//   node bench/bare-decision-server.mjs <postgres://…?schema=NAME | sqlite:/path>
// Prints `listening on http://HOST:PORT ` on stdout.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { Controller, HttpCode, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Database from 'better-sqlite3';
import pg from 'pg';

const database = process.argv[2] ?? '';

const DDL = [
  'CREATE TABLE ops (id varchar(36) PRIMARY KEY, status varchar(16) NOT NULL, version integer NOT NULL, updated_at varchar(32) NOT NULL)',
  'CREATE TABLE items (operation_id varchar(36) NOT NULL, tool_call_id varchar(64) NOT NULL, status varchar(16) NOT NULL, decided_by varchar(64), updated_at varchar(32) NOT NULL, PRIMARY KEY (operation_id, tool_call_id))',
  'CREATE TABLE owed (id varchar(36) PRIMARY KEY, operation_id varchar(36) NOT NULL, tool_call_id varchar(64) NOT NULL, point varchar(32) NOT NULL, claimed_by varchar(80), claimed_until varchar(32), created_at varchar(32) NOT NULL)',
];
const OPERATION = 'bare-operation';
const CALL = 'bare-call';
const now = () => new Date().toISOString();

/** The decision-sized transaction on PostgreSQL: a pool of one warm connection per request in flight. */
async function postgres() {
  const url = new URL(database);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  pool.on('connect', (client) => void client.query(`SET search_path TO "${schema}"`));
  const setup = await pool.connect();
  await setup.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  await setup.query(`SET search_path TO "${schema}"`);
  for (const ddl of DDL) await setup.query(ddl);
  await setup.query("INSERT INTO ops VALUES ($1, 'waiting', 1, $2)", [OPERATION, now()]);
  await setup.query("INSERT INTO items VALUES ($1, $2, 'pending', NULL, $3)", [OPERATION, CALL, now()]);
  setup.release();
  return async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query('SELECT id, status, version FROM ops WHERE id = $1 FOR UPDATE', [OPERATION]);
      if (rows.length !== 1) throw new Error('bare: no operation');
      // Always one row (a decision's compare-and-set finds its pending item): the status goes back and forth.
      await client.query("UPDATE items SET status = CASE status WHEN 'pending' THEN 'approved' ELSE 'pending' END, decided_by = $3, updated_at = $4 WHERE operation_id = $1 AND tool_call_id = $2", [OPERATION, CALL, 'local', now()]);
      await client.query('INSERT INTO owed VALUES ($1, $2, $3, $4, $5, $6, $7)', [randomUUID(), OPERATION, CALL, 'afterHumanIntervention', 'bare', now(), now()]);
      await client.query("SELECT count(*) FROM items WHERE operation_id = $1 AND status = 'pending'", [OPERATION]);
      const moved = await client.query("UPDATE ops SET status = 'running', version = version + 1, updated_at = $2 WHERE id = $1 RETURNING version", [OPERATION, now()]);
      await client.query('SELECT pg_notify($1, $2)', ['bare_events', JSON.stringify({ operationId: OPERATION, kind: 'status', status: 'running', version: moved.rows[0].version })]);
      await client.query('COMMIT');
      return 'running';
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}

/** The same transaction on SQLite, as the runtime opens it (WAL, synchronous = NORMAL). */
function sqlite() {
  const db = new Database(database.slice('sqlite:'.length));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  for (const ddl of DDL) db.exec(ddl);
  db.prepare("INSERT INTO ops VALUES (?, 'waiting', 1, ?)").run(OPERATION, now());
  db.prepare("INSERT INTO items VALUES (?, ?, 'pending', NULL, ?)").run(OPERATION, CALL, now());
  const read = db.prepare('SELECT id, status, version FROM ops WHERE id = ?');
  const decide = db.prepare("UPDATE items SET status = CASE status WHEN 'pending' THEN 'approved' ELSE 'pending' END, decided_by = ?, updated_at = ? WHERE operation_id = ? AND tool_call_id = ?");
  const owe = db.prepare('INSERT INTO owed VALUES (?, ?, ?, ?, ?, ?, ?)');
  const count = db.prepare("SELECT count(*) AS n FROM items WHERE operation_id = ? AND status = 'pending'");
  const move = db.prepare("UPDATE ops SET status = 'running', version = version + 1, updated_at = ? WHERE id = ?");
  const transaction = db.transaction(() => {
    if (!read.get(OPERATION)) throw new Error('bare: no operation');
    decide.run('local', now(), OPERATION, CALL);
    owe.run(randomUUID(), OPERATION, CALL, 'afterHumanIntervention', 'bare', now(), now());
    count.get(OPERATION);
    move.run(now(), OPERATION);
    return 'running';
  });
  return async () => transaction.immediate();
}

const decide = database.startsWith('postgres') ? await postgres() : sqlite();

class BareDecisionController {
  async decide() {
    return { status: await decide() };
  }
}
const method = Object.getOwnPropertyDescriptor(BareDecisionController.prototype, 'decide');
Post('interventions/:toolCallId')(BareDecisionController.prototype, 'decide', method);
HttpCode(200)(BareDecisionController.prototype, 'decide', method);
Controller('v1/operations/:id')(BareDecisionController);

class BareModule {}
Module({ controllers: [BareDecisionController] })(BareModule);

const app = await NestFactory.create(BareModule, { logger: false });
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
process.stdout.write(`listening on http://127.0.0.1:${port} (pid ${process.pid})\n`);
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
