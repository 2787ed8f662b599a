/** Options of `AgentHooksModule.forRoot` (DESIGN §6). Fields beyond the hooks room are read by later rooms. */
import type { ChatModel } from './runtime/models/chat-model.js';

export interface AgentHooksWebhookOptions {
  /** CIDRs webhooks may reach in addition to public addresses (the SSRF guard). */
  allowNetworks?: string[];
  /** Signs outgoing webhooks (Standard Webhooks); read from the environment by the app, never stored. */
  signingSecret?: string;
  /** Base URL for app-relative webhook URLs (`/path`). */
  appUrl?: string;
}

export interface AgentHooksQueueOptions {
  /** BullMQ key prefix (default `agent-hooks`): one per deployment sharing a Redis. */
  prefix?: string;
  /** Whether this process runs step jobs (default true); an API-only process sets false. */
  worker?: boolean;
  /** Step jobs run at once in this process (default 4). */
  concurrency?: number;
  /** A step's database lease, renewed while it runs (default 10 s). */
  leaseMs?: number;
  /** BullMQ's job lock: a killed worker's job is retried elsewhere after about this long (default 10 s). */
  lockMs?: number;
  /** How often running operations without a holder are re-enqueued (default 5 s). */
  reconcileEveryMs?: number;
}

export interface AgentHooksModuleOptions {
  /**
   * `'sqlite:./data/agent-hooks.sqlite'` (default), `'sqlite::memory:'`, `'postgres://…'`, TypeORM options, or
   * `'host'`: the host app's default TypeORM DataSource, which must list `AGENT_HOOKS_ENTITIES` and have
   * `AGENT_HOOKS_MIGRATIONS` applied by the host's own pipeline; we never migrate or close it.
   */
  database?: string | Record<string, unknown>;
  /** `queue`: every step is a BullMQ job any worker may run (requires PostgreSQL and Redis). */
  mode?: 'local' | 'queue';
  /** Queue mode's Redis, `redis://host:port[/db]` (default `redis://127.0.0.1:6379`). */
  redis?: string;
  /** Queue mode tuning; the defaults suit most deployments. */
  queue?: AgentHooksQueueOptions;
  /**
   * The agents config (DESIGN §8). Default: `config/agents.yaml` in the working folder when it exists, else
   * none — the rule `agentctl` follows too; `false`: no config file, whatever the folder holds.
   */
  configFile?: string | false;
  pluginsFile?: string;
  /**
   * Models given in code (DESIGN §12), keyed by the name agents.yaml gives them: `{ provider: code, name: main }`.
   * Their `retry` and `timeoutMs` come from that entry; the host builds and closes them.
   */
  models?: Record<string, ChatModel>;
  webhooks?: AgentHooksWebhookOptions;
  /** Graceful stop (SPEC G4). */
  shutdown?: AgentHooksShutdownOptions;
  /** Recovery after a crash, in every mode (SPEC G2); the defaults take an operation over within 15 s. */
  recovery?: AgentHooksRecoveryOptions;
  /** OpenTelemetry spans (SPEC O1–O5) go to whatever SDK the host registered; without one they cost nothing. */
  tracing?: AgentHooksTracingOptions;
}

export interface AgentHooksTracingOptions {
  /** Prompts, tool arguments and results on spans (default false, SPEC O4); secrets never. */
  captureContent?: boolean;
}

export interface AgentHooksRecoveryOptions {
  /** How long the process driving a step holds the operation's lease, renewed while it works (default 10 s). */
  leaseMs?: number;
  /** How often every process looks for expired leases, owed terminal sequences and owed notifications (default 5 s). */
  reconcileEveryMs?: number;
  /** Waiting on an operation follows its events; this slow re-read is only the backstop (default 10 s). */
  recheckMs?: number;
}

export interface AgentHooksShutdownOptions {
  /**
   * How long a running step may take to finish its current tool call once the app closes; after that the
   * call is cut and never published, the step handed back. Default `SHUTDOWN_GRACE_MS`, else 10 s.
   */
  graceMs?: number;
}
