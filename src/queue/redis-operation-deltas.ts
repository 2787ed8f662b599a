/**
 * SPEC K5 in queue mode: a worker's deltas reach the watchers in every process (the API's SSE clients, a
 * host's `events()`) over Redis pub/sub — one channel per operation, `<prefix>:deltas:<operationId>` — never
 * over PostgreSQL `NOTIFY` (the commit's channel: deltas must not queue behind or in front of it). Pub/sub
 * delivers at most once: a delta lost in a reconnect loses nothing, the committed message holds the text.
 *
 * K6: a worker publishes a call's first delta; when Redis answers that nobody received it, the operation's
 * deltas are skipped for `QUIET_MS` and then probed again, so an unwatched answer costs a publish now and
 * then, not one per token. Watchers in this process subscribe their operation's channel (counted, one
 * SUBSCRIBE per operation) and get what arrives through an in-process fan-out. Both connections are opened
 * on first use (a local-mode app never connects) and closed by the `ShutdownCoordinator` (G4).
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Observable } from 'rxjs';
import { errorType } from '../hooks/hook-errors.js';
import { LocalOperationDeltas } from '../runtime/streaming/local-operation-deltas.js';
import type { OperationDelta, OperationDeltas } from '../runtime/streaming/operation-deltas.port.js';
import { redisConnection } from './queue-connection.js';
import { QUEUE_SETTINGS, type QueueSettings } from './queue-settings.js';

/** How long an operation whose delta nobody received is left unpublished before the next probe. */
const QUIET_MS = 250;
/** Publishes not yet answered by Redis; past this (Redis slow or away) deltas are dropped, never queued without end. */
const MAX_IN_FLIGHT = 10_000;
/** Operations remembered as unwatched; the oldest is forgotten first (it is probed again, nothing more). */
const MAX_QUIET_ENTRIES = 10_000;

@Injectable()
export class RedisOperationDeltas implements OperationDeltas {
  private readonly logger = new Logger('AgentHooks:Deltas');
  private readonly local = new LocalOperationDeltas();
  private readonly quietUntil = new Map<string, number>();
  private readonly channels = new Map<string, number>();
  /** Watched channels whose SUBSCRIBE failed: the next watcher of the operation tries again. */
  private readonly unsubscribed = new Set<string>();
  private publisher: Promise<Redis> | undefined;
  private subscriber: Promise<Redis> | undefined;
  private inFlight = 0;
  private closed = false;

  constructor(@Inject(QUEUE_SETTINGS) private readonly settings: QueueSettings) {}

  publish(operationId: string, delta: OperationDelta): void {
    if (this.closed || this.inFlight >= MAX_IN_FLIGHT) return;
    const quiet = this.quietUntil.get(operationId);
    if (quiet !== undefined && Date.now() < quiet) return;
    this.inFlight++;
    const payload = JSON.stringify({ stepIndex: delta.stepIndex, text: delta.text });
    // One promise per connection: publishes keep their order while it opens, and after.
    void this.openPublisher()
      .then((redis) => redis.publish(this.channel(operationId), payload))
      .then(
        (receivers) => this.heard(operationId, receivers),
        () => undefined,
      )
      .finally(() => this.inFlight--);
  }

  of(operationId: string): Observable<OperationDelta> {
    return new Observable<OperationDelta>((subscriber) => {
      const inner = this.local.of(operationId).subscribe(subscriber);
      this.watch(operationId);
      return () => {
        inner.unsubscribe();
        this.unwatch(operationId);
      };
    });
  }

  /** Closes both connections; called by the `ShutdownCoordinator` with the other Redis clients. */
  async close(): Promise<void> {
    this.closed = true;
    const connections = await Promise.all([this.publisher?.catch(() => undefined), this.subscriber?.catch(() => undefined)]);
    for (const redis of connections) redis?.disconnect();
    this.publisher = this.subscriber = undefined;
  }

  private heard(operationId: string, receivers: number): void {
    if (receivers > 0) {
      this.quietUntil.delete(operationId);
      return;
    }
    if (this.quietUntil.size >= MAX_QUIET_ENTRIES) this.quietUntil.delete(this.quietUntil.keys().next().value!);
    this.quietUntil.set(operationId, Date.now() + QUIET_MS);
  }

  private watch(operationId: string): void {
    const count = this.channels.get(operationId) ?? 0;
    this.channels.set(operationId, count + 1);
    if ((count > 0 && !this.unsubscribed.has(operationId)) || this.closed) return;
    this.unsubscribed.delete(operationId);
    // Either step may fail (no connection; a SUBSCRIBE refused during a reconnect): deltas are then missed
    // until the next watcher tries again, the committed message still arrives (K5).
    this.openSubscriber()
      .then((redis) => redis.subscribe(this.channel(operationId)))
      .catch((error: unknown) => {
        if (this.channels.has(operationId)) this.unsubscribed.add(operationId);
        this.logger.warn(`deltas: cannot subscribe (${errorType(error)})`);
      });
  }

  private unwatch(operationId: string): void {
    const count = (this.channels.get(operationId) ?? 1) - 1;
    if (count > 0) {
      this.channels.set(operationId, count);
      return;
    }
    this.channels.delete(operationId);
    this.unsubscribed.delete(operationId);
    if (this.closed) return;
    void this.subscriber?.then((redis) => redis.unsubscribe(this.channel(operationId))).catch(() => undefined);
  }

  private channel(operationId: string): string {
    return `${this.settings.prefix}:deltas:${operationId}`;
  }

  private openPublisher(): Promise<Redis> {
    this.publisher ??= this.connect('publisher').catch((error: unknown) => {
      // The next delta tries again; those of this attempt are lost, the message is not.
      this.publisher = undefined;
      throw error;
    });
    return this.publisher;
  }

  private openSubscriber(): Promise<Redis> {
    this.subscriber ??= this.connect('subscriber').then(
      (redis) => {
        const prefix = `${this.settings.prefix}:deltas:`;
        redis.on('message', (channel: string, message: string) => {
          if (!channel.startsWith(prefix)) return;
          const delta = parsedDelta(message);
          if (delta) this.local.publish(channel.slice(prefix.length), delta);
        });
        return redis;
      },
      (error: unknown) => {
        this.subscriber = undefined;
        throw error;
      },
    );
    return this.subscriber;
  }

  private async connect(role: string): Promise<Redis> {
    const { Redis } = await import('ioredis');
    // A command fails after one reconnect attempt instead of waiting for Redis without end: a delta is worth little late.
    // Named, so an operator (or a test) can tell the connection apart in CLIENT LIST.
    const redis = new Redis({ ...(redisConnection(this.settings.redis) as Record<string, unknown>), maxRetriesPerRequest: 1, lazyConnect: true, connectionName: `${this.settings.prefix}:deltas-${role}` });
    // Redis going away is expected (pub/sub re-subscribes on reconnect): the type once per error, never details.
    redis.on('error', (error: unknown) => this.logger.warn(`deltas ${role}: ${errorType(error)}`));
    // Used once ready: commands given while the connection is being set up may overtake the queued ones,
    // and deltas must keep their order.
    try {
      await redis.connect();
    } catch (error) {
      redis.disconnect();
      throw error;
    }
    return redis;
  }
}

/** A message on our channel that is not a delta (another writer) is ignored. */
function parsedDelta(message: string): OperationDelta | undefined {
  try {
    const value = JSON.parse(message) as { stepIndex?: unknown; text?: unknown };
    return Number.isSafeInteger(value.stepIndex) && typeof value.text === 'string' ? { stepIndex: value.stepIndex as number, text: value.text } : undefined;
  } catch {
    return undefined;
  }
}
