/**
 * The one listening connection of a runtime on PostgreSQL (DESIGN §4): a dedicated `pg.Client` — built
 * from the DataSource's own connection options, with the `pg` the DataSource loaded, so a host's
 * DataSource (`database: 'host'`) works alike — that `LISTEN`s on its schema's channel (`eventsChannelOf`) and hands the events
 * other processes committed to `sink`. A commit's own process published its events already, so payloads
 * whose `origin` is this process's `StoreDatabase` are skipped. When the connection drops it reconnects with
 * a backoff; after each (re)connect the sink gets `resync`, since events may have been missed meanwhile.
 * Malformed payloads are ignored; no payload is ever logged.
 */
import type { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { errorType } from '../hooks/hook-errors.js';
import type { OperationEvent, OperationEventKind } from '../runtime/operation-events.port.js';
import type { OperationStatus } from '../runtime/runtime-store.port.js';
import { pgModuleOf } from './driver-sessions.js';
import { eventsChannelOf, type NotifiedEvents } from './store-database.js';

/** What the listener needs of a `pg.Client` (pg is an optional peer dependency without bundled types). */
interface ListeningClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: (error?: unknown) => void): unknown;
}

type ClientClass = new (config: Record<string, unknown>) => ListeningClient;

export interface EventSink {
  events(events: readonly OperationEvent[]): void;
  resync(): void;
  /**
   * Whether an event of this payload may be wanted, without parsing it: false only when no event of it
   * can be (nobody follows every event, and no operation followed here is named in it). Absent: always.
   */
  mayWant?(payload: string): boolean;
}

/** Reconnect delays: from the first up to the last, doubling. */
export const LISTEN_RETRY_FIRST_MS = 100;
export const LISTEN_RETRY_MAX_MS = 5_000;
/** `application_name` of the listening connection when the DataSource sets none (shows in `pg_stat_activity`). */
export const LISTENER_APPLICATION_NAME = 'nest-agent-hooks:events';

const KINDS: ReadonlySet<OperationEventKind> = new Set(['created', 'status', 'message', 'intervention', 'owed']);
const STATUSES: ReadonlySet<OperationStatus> = new Set(['running', 'waiting', 'completed']);

/** The events of a `pg_notify` payload, or undefined when it is not a well-formed `NotifiedEvents`. */
export function parseNotifiedEvents(payload: string | undefined): NotifiedEvents | undefined {
  if (typeof payload !== 'string') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || typeof value['origin'] !== 'string' || !Array.isArray(value['events'])) return undefined;
  const events: OperationEvent[] = [];
  for (const item of value['events'] as unknown[]) {
    const event = toEvent(item);
    if (!event) return undefined;
    events.push(event);
  }
  return { origin: value['origin'], events };
}

function toEvent(item: unknown): OperationEvent | undefined {
  if (!isRecord(item)) return undefined;
  const { operationId, kind, status, version } = item;
  if (typeof operationId !== 'string' || operationId === '' || !KINDS.has(kind as OperationEventKind)) return undefined;
  if (status !== undefined && !STATUSES.has(status as OperationStatus)) return undefined;
  if (version !== undefined && !Number.isSafeInteger(version)) return undefined;
  return {
    operationId,
    kind: kind as OperationEventKind,
    ...(status !== undefined ? { status: status as OperationStatus } : {}),
    ...(version !== undefined ? { version: version as number } : {}),
  };
}

/** The error's type and, for a socket or PostgreSQL error, its code: never its message (it may name a host or user). */
function describe(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return `${errorType(error)}${typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? ` ${code}` : ''}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `pg.Client` config for `dataSource`, as TypeORM builds its pool's (`PostgresDriver.createPool`):
 * URL or host/port/user/password/database, SSL, connect timeout, application name, then `extra`; the
 * replication master when replication is configured. TCP keep-alive on, so a dead peer is noticed.
 */
export function listenerConnectionConfig(dataSource: DataSource): Record<string, unknown> {
  const options = dataSource.options as unknown as Record<string, unknown>;
  const replication = options['replication'] as { master?: Record<string, unknown> } | undefined;
  const credentials = replication?.master ?? options;
  const config: Record<string, unknown> = {
    connectionString: credentials['url'],
    host: credentials['host'],
    user: credentials['username'],
    password: credentials['password'],
    database: credentials['database'],
    port: credentials['port'],
    ssl: credentials['ssl'],
    connectionTimeoutMillis: options['connectTimeoutMS'],
    application_name: options['applicationName'] ?? credentials['applicationName'] ?? LISTENER_APPLICATION_NAME,
    keepAlive: true,
    ...((options['extra'] as Record<string, unknown> | undefined) ?? {}),
  };
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}

/** The `pg.Client` class the DataSource's driver loaded (`pg`, or its native binding). */
function clientClassOf(dataSource: DataSource): ClientClass {
  const Client = pgModuleOf(dataSource)?.Client;
  if (typeof Client !== 'function') throw new TypeError('the PostgreSQL driver of this DataSource exposes no pg.Client');
  return Client as ClientClass;
}

export class PostgresEventListener {
  private readonly Client: ClientClass;
  private readonly config: Record<string, unknown>;
  /** This schema's channel (`eventsChannelOf`): another schema's events in the same database are not heard. */
  private readonly channel: string;
  private client: ListeningClient | undefined;
  private connecting: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private delay = LISTEN_RETRY_FIRST_MS;
  private closed = false;
  /** Logged once per outage, not once per attempt. */
  private outageLogged = false;
  /**
   * How this process's own payloads begin, as `JSON.stringify` and PostgreSQL's `json_build_object` write
   * them: skipped without parsing (a worker hears each of its own commits).
   */
  private readonly ownPrefixes: readonly string[];

  constructor(
    dataSource: DataSource,
    private readonly origin: string,
    private readonly sink: EventSink,
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
  ) {
    this.Client = clientClassOf(dataSource);
    this.config = listenerConnectionConfig(dataSource);
    this.channel = eventsChannelOf(dataSource);
    const quoted = JSON.stringify(origin);
    this.ownPrefixes = [`{"origin":${quoted},`, `{"origin" : ${quoted},`];
  }

  start(): void {
    this.connecting ??= this.connect();
  }

  /** Ends the connection; no reconnect after this. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.retry = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
    await this.connecting?.catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new this.Client(this.config);
    this.client = client;
    let lost = false;
    const onLost = (error?: unknown) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      if (!this.outageLogged) {
        this.outageLogged = true;
        this.logger.warn(`the operation events connection is lost${error ? ` (${describe(error)})` : ''}; reconnecting`);
      }
      this.scheduleReconnect();
    };
    // An error handler is a must: an unhandled 'error' event would end the process.
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.deliver(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      onLost(error);
      return;
    }
    if (this.closed || lost) return;
    this.delay = LISTEN_RETRY_FIRST_MS;
    if (this.outageLogged) this.logger.log('the operation events connection is back');
    this.outageLogged = false;
    // Whatever was committed before LISTEN took effect (the first connect, or during an outage) was not
    // heard: everyone re-reads what they watch.
    this.sink.resync();
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retry);
    const delay = this.delay;
    this.delay = Math.min(this.delay * 2, LISTEN_RETRY_MAX_MS);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.connecting = this.connect();
    }, delay);
    // The listener never keeps a process alive on its own.
    this.retry.unref();
  }

  private deliver(payload: string | undefined): void {
    if (payload !== undefined && this.ownPrefixes.some((prefix) => payload.startsWith(prefix))) return;
    // A worker hears every other worker's commits: those of operations nobody here follows are not parsed.
    if (payload !== undefined && this.sink.mayWant?.(payload) === false) return;
    const notified = parseNotifiedEvents(payload);
    if (!notified || notified.origin === this.origin || notified.events.length === 0) return;
    this.sink.events(notified.events);
  }
}
