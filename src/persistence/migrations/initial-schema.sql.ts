/**
 * The first schema, written out by hand for both dialects (DESIGN §5: migrations, not `synchronize`).
 * It matches the entities column for column — `migrations.spec.ts` asks TypeORM's schema builder for the
 * difference on both drivers and expects none. The one dialect difference is the timeline's
 * auto-increment key: SQLite only auto-increments an `INTEGER PRIMARY KEY` column constraint.
 */
import type { SqlDialect } from '../dialect.js';

export function initialSchemaUp(dialect: SqlDialect, table: (name: string) => string): string[] {
  const sqlite = dialect === 'sqlite';
  const outcomeSeq = sqlite ? `"seq" integer PRIMARY KEY AUTOINCREMENT NOT NULL` : `"seq" SERIAL NOT NULL`;
  const outcomePk = sqlite ? '' : `,\n      CONSTRAINT "agent_hooks_hook_outcomes_pk" PRIMARY KEY ("seq")`;
  const operations = table('agent_hooks_operations');
  const messages = table('agent_hooks_messages');
  const outcomes = table('agent_hooks_hook_outcomes');
  return [
    `CREATE TABLE ${operations} (
      "id" varchar(36) NOT NULL,
      "parent_operation_id" varchar(36),
      "agent_id" varchar(255) NOT NULL,
      "owner_id" varchar(255),
      "status" varchar(32) NOT NULL,
      "reason" varchar(32),
      "step_index" integer NOT NULL,
      "run_context" text NOT NULL,
      "input_tokens" integer NOT NULL,
      "output_tokens" integer NOT NULL,
      "cost_usd" double precision NOT NULL,
      "error_type" varchar(255),
      "error_message" text,
      "idempotency_owner" varchar(255),
      "idempotency_key" varchar(255),
      "version" integer NOT NULL,
      "lease_owner" varchar(255),
      "lease_until" varchar(32),
      "created_at" varchar(32) NOT NULL,
      "updated_at" varchar(32) NOT NULL,
      "completed_at" varchar(32),
      CONSTRAINT "agent_hooks_operations_pk" PRIMARY KEY ("id")
    )`,
    `CREATE UNIQUE INDEX "agent_hooks_operations_idempotency_uq" ON ${operations} ("idempotency_owner", "idempotency_key")`,
    `CREATE INDEX "agent_hooks_operations_status_completed_idx" ON ${operations} ("status", "completed_at")`,
    `CREATE INDEX "agent_hooks_operations_parent_idx" ON ${operations} ("parent_operation_id")`,
    `CREATE TABLE ${table('agent_hooks_operation_hooks')} (
      "operation_id" varchar(36) NOT NULL,
      "position" integer NOT NULL,
      "hook_id" varchar(255) NOT NULL,
      "type" varchar(64) NOT NULL,
      "matcher" text,
      "webhook" text NOT NULL,
      CONSTRAINT "agent_hooks_operation_hooks_pk" PRIMARY KEY ("operation_id", "position")
    )`,
    `CREATE TABLE ${messages} (
      "id" varchar(36) NOT NULL,
      "operation_id" varchar(36) NOT NULL,
      "seq" integer NOT NULL,
      "role" varchar(32) NOT NULL,
      "content" text NOT NULL,
      "tool_calls" text,
      "tool_call_id" varchar(255),
      "identifier" varchar(255),
      "api_name" varchar(255),
      "error" varchar(32),
      "state" text,
      "created_at" varchar(32) NOT NULL,
      CONSTRAINT "agent_hooks_messages_pk" PRIMARY KEY ("id")
    )`,
    `CREATE UNIQUE INDEX "agent_hooks_messages_operation_seq_uq" ON ${messages} ("operation_id", "seq")`,
    `CREATE TABLE ${table('agent_hooks_interventions')} (
      "operation_id" varchar(36) NOT NULL,
      "tool_call_id" varchar(255) NOT NULL,
      "step_index" integer NOT NULL,
      "call_index" integer NOT NULL,
      "identifier" varchar(255) NOT NULL,
      "api_name" varchar(255) NOT NULL,
      "args" text NOT NULL,
      "kind" varchar(32) NOT NULL,
      "status" varchar(32) NOT NULL,
      "claimed_by" varchar(255),
      "claimed_at" varchar(32),
      "decision" varchar(32),
      "decision_reason" text,
      "decided_by" varchar(255),
      "decided_at" varchar(32),
      "reply" text,
      "created_at" varchar(32) NOT NULL,
      "updated_at" varchar(32) NOT NULL,
      CONSTRAINT "agent_hooks_interventions_pk" PRIMARY KEY ("operation_id", "tool_call_id")
    )`,
    `CREATE TABLE ${table('agent_hooks_tool_result_placeholders')} (
      "operation_id" varchar(36) NOT NULL,
      "tool_call_id" varchar(255) NOT NULL,
      "state" varchar(32) NOT NULL,
      "result" text,
      "created_at" varchar(32) NOT NULL,
      "finalized_at" varchar(32),
      CONSTRAINT "agent_hooks_tool_result_placeholders_pk" PRIMARY KEY ("operation_id", "tool_call_id")
    )`,
    `CREATE TABLE ${outcomes} (
      ${outcomeSeq},
      "operation_id" varchar(36) NOT NULL,
      "at" varchar(32) NOT NULL,
      "point" varchar(64) NOT NULL,
      "hook_id" varchar(255) NOT NULL,
      "source" varchar(32) NOT NULL,
      "outcome" varchar(32) NOT NULL,
      "error_code" varchar(64),
      "latency_ms" double precision NOT NULL${outcomePk}
    )`,
    `CREATE INDEX "agent_hooks_hook_outcomes_operation_seq_idx" ON ${outcomes} ("operation_id", "seq")`,
  ];
}

/** Drops in reverse order; indexes go with their tables. */
export function initialSchemaDown(table: (name: string) => string): string[] {
  return [
    'agent_hooks_hook_outcomes',
    'agent_hooks_tool_result_placeholders',
    'agent_hooks_interventions',
    'agent_hooks_messages',
    'agent_hooks_operation_hooks',
    'agent_hooks_operations',
  ].map((name) => `DROP TABLE ${table(name)}`);
}
