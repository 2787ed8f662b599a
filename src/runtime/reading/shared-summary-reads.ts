/**
 * One read of operation summaries for every follower of changes (`runtime.changes()`, `GET /v1/events`)
 * that wants them at the same time. A commit wakes every open follower in the same turn; each asks for the
 * operations its events named, and the requests of that turn are answered by one read (per READ_BATCH
 * ids) — so a thousand consoles cost one read per burst, not a thousand. It also remembers who owns what it read (ownership
 * never changes), so a stream can drop another owner's events without asking.
 */
import { Injectable } from '@nestjs/common';
import type { OperationSummary } from '../operation-read.port.js';
import { OperationReadService } from './operation-read.service.js';

/** Owners remembered at most; the oldest are forgotten first (their next event is merely read again). */
export const OWNER_MEMORY = 50_000;

/** The owner of an operation nobody read yet. */
export const UNKNOWN_OWNER = Symbol('unknown owner');

@Injectable()
export class SharedSummaryReads {
  private next: { ids: Set<string>; read: Promise<ReadonlyMap<string, OperationSummary>> } | undefined;
  private readonly owners = new Map<string, string | undefined>();

  constructor(private readonly reader: OperationReadService) {}

  /** The summaries of those of `ids` that exist (any owner), read together with what others ask for in this turn. */
  read(ids: readonly string[]): Promise<ReadonlyMap<string, OperationSummary>> {
    let next = this.next;
    if (!next) {
      const wanted = new Set<string>();
      const read = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
        // From here on, requests gather for the following read.
        if (this.next?.ids === wanted) this.next = undefined;
        const found = new Map<string, OperationSummary>();
        for (const summary of await this.reader.summariesOf([...wanted])) {
          found.set(summary.id, summary);
          this.remember(summary.id, summary.ownerId);
        }
        return found;
      });
      next = this.next = { ids: wanted, read };
    }
    for (const id of ids) next.ids.add(id);
    return next.read;
  }

  /** Who owns `operationId`, when a read found out. */
  ownerOf(operationId: string): string | undefined | typeof UNKNOWN_OWNER {
    return this.owners.has(operationId) ? this.owners.get(operationId) : UNKNOWN_OWNER;
  }

  private remember(operationId: string, ownerId: string | undefined): void {
    if (this.owners.has(operationId)) return;
    this.owners.set(operationId, ownerId);
    if (this.owners.size > OWNER_MEMORY) this.owners.delete(this.owners.keys().next().value!);
  }
}
