/**
 * The notifications a human decision owes (SPEC G3): `afterHumanIntervention` after an approve or a
 * reject-and-continue, `onStopByHumanIntervention` after a stop. Each is an owed row committed with the
 * decision; the decider delivers it right after the commit (`deliverOwned`), a reconciler redelivers what a
 * dead process left (`OwedWork`). Every attempt rebuilds the same event, so the webhook-id stays stable.
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { RunContext } from '../hooks/contexts.js';
import { errorType } from '../hooks/hook-errors.js';
import { HookDispatcher } from '../hooks/hook-dispatcher.js';
import { agentEventBase } from './agent-event-base.js';
import {
  RUNTIME_STORE,
  type InterventionAction,
  type OwedNotification,
  type RuntimeStore,
  type StoredIntervention,
  type StoredOperation,
} from './runtime-store.port.js';

/** Who holds an owed notification's claim, and for how long each renewal extends it. */
export interface NotificationClaim {
  owner: string;
  holdMs: number;
}

/** What the decision said beyond its action: a rejection's reason, edited arguments (F6). */
export interface DecisionDetail {
  rejectionReason?: string;
  argsEdited?: boolean;
}

type InterventionEvent =
  | { type: 'afterHumanIntervention'; action: InterventionAction; toolCallId: string; rejectionReason?: string; argsEdited?: true }
  | { type: 'onStopByHumanIntervention'; toolCallId: string; rejectionReason?: string };

@Injectable()
export class InterventionNotifier {
  private readonly logger = new Logger('AgentRuntime');

  constructor(
    private readonly dispatcher: HookDispatcher,
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
  ) {}

  /**
   * Whether anything here observes the points `owed` notifies (a hook of any family, an `events$`
   * subscriber): if not, delivering them only records them delivered (E3), which nobody has to wait for.
   */
  observed(operationId: string, runContext: RunContext, owed: readonly OwedNotification[]): boolean {
    if (owed.length === 0) return false;
    const options = { operationId, runContext, environment: this.dispatcher.environmentSnapshot() };
    return owed.some((notification) => this.dispatcher.isObserved(notification.point, options));
  }

  /**
   * Delivers the notifications a decision of this process owes, right after its commit. Delivered means the
   * hook ran under its own failure policy: a hook that failed is not retried (its error reaches the
   * decider, as before); only a crash leaves the row owed, for a reconciler.
   */
  async deliverOwned(operation: StoredOperation, item: StoredIntervention, runContext: RunContext, owed: readonly OwedNotification[], detail: DecisionDetail, claim: NotificationClaim): Promise<void> {
    for (const notification of owed) {
      try {
        // The step of the call, not the operation's current one: the webhook-id stays the same on redelivery.
        await this.whileClaimed(notification, claim, () => this.notify({ ...operation, stepIndex: item.stepIndex }, runContext, notification, detail));
      } finally {
        await this.store.markNotificationDelivered(notification.id).catch((error: unknown) => this.logger.warn(`could not record a delivered notification of ${operation.id} (${errorType(error)})`));
      }
    }
  }

  /**
   * Runs `delivery` while renewing the notification's claim every third of its hold: a webhook slower than
   * the claim must not let a reconciler deliver the same notification meanwhile.
   */
  async whileClaimed<T>(notification: OwedNotification, claim: NotificationClaim, delivery: () => Promise<T>): Promise<T> {
    const timer = setInterval(
      () => void this.store.renewNotificationClaim(notification.id, claim.owner, claim.holdMs).catch(() => false),
      Math.max(100, Math.floor(claim.holdMs / 3)),
    );
    timer.unref();
    try {
      return await delivery();
    } finally {
      clearInterval(timer);
    }
  }

  /** Runs one notification's hooks; `operation` carries the step of the decided call. */
  async notify(operation: StoredOperation, runContext: RunContext, notification: OwedNotification, detail: DecisionDetail): Promise<void> {
    const event = owedEvent(notification, detail);
    const base = agentEventBase({
      ...operation,
      operationId: operation.id,
      ...(runContext.userId ? { userId: runContext.userId } : {}),
    });
    await this.dispatcher.dispatch(event.type, { ...base, ...event } as never, { operationId: operation.id, runContext });
  }
}

/** The event of an owed notification, rebuilt from its identifiers (so every attempt has the same webhook-id). */
function owedEvent(notification: OwedNotification, { rejectionReason, argsEdited }: DecisionDetail): InterventionEvent {
  const reason = rejectionReason !== undefined ? { rejectionReason } : {};
  if (notification.point === 'onStopByHumanIntervention') return { type: 'onStopByHumanIntervention', toolCallId: notification.toolCallId, ...reason };
  const action = notification.action ?? 'approve';
  return {
    type: 'afterHumanIntervention',
    action,
    toolCallId: notification.toolCallId,
    ...(action === 'rejectAndContinue' ? reason : {}),
    ...(action === 'approve' && argsEdited ? { argsEdited: true as const } : {}),
  };
}
