/**
 * SPEC K5 in one process: each watched operation has one `Subject`, created by its first watcher and dropped
 * with its last, so publishing to an operation nobody watches is one map lookup (K6).
 */
import { Injectable } from '@nestjs/common';
import { Observable, Subject } from 'rxjs';
import type { OperationDelta, OperationDeltas } from './operation-deltas.port.js';

interface Watched {
  subject: Subject<OperationDelta>;
  watchers: number;
}

@Injectable()
export class LocalOperationDeltas implements OperationDeltas {
  private readonly watched = new Map<string, Watched>();

  publish(operationId: string, delta: OperationDelta): void {
    this.watched.get(operationId)?.subject.next(delta);
  }

  /** Whether anything in this process watches the operation's deltas. */
  isWatched(operationId: string): boolean {
    return this.watched.has(operationId);
  }

  of(operationId: string): Observable<OperationDelta> {
    return new Observable<OperationDelta>((subscriber) => {
      let entry = this.watched.get(operationId);
      if (!entry) {
        entry = { subject: new Subject<OperationDelta>(), watchers: 0 };
        this.watched.set(operationId, entry);
      }
      entry.watchers++;
      const subscription = entry.subject.subscribe(subscriber);
      const held = entry;
      return () => {
        subscription.unsubscribe();
        if (--held.watchers === 0 && this.watched.get(operationId) === held) this.watched.delete(operationId);
      };
    });
  }
}
