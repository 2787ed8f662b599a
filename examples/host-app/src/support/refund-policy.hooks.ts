/**
 * The host's policy, as hooks: an order is refunded at most once. Checked before the call runs (after its
 * approval), against the host's own table; a denial is what the model and the timeline see instead.
 */
import { Injectable } from '@nestjs/common';
import { OnHook, type BeforeToolCallEvent, type HookDecision } from 'nest-agent-hooks';
import { DataSource } from 'typeorm';
import { Refund } from '../database/refund.entity.js';

@Injectable()
export class RefundPolicy {
  constructor(private readonly dataSource: DataSource) {}

  // A control: if the check itself fails (the database is down), the call is blocked, not let through.
  @OnHook('beforeToolCall', { matcher: '^payments/refund$', onError: 'block' })
  async oneRefundPerOrder(event: BeforeToolCallEvent): Promise<HookDecision> {
    const order = String(event.args.order);
    const earlier = await this.dataSource.getRepository(Refund).findOneBy({ order });
    if (earlier && earlier.idempotencyKey !== event.idempotencyKey) return { decision: 'deny', reason: `order ${order} was already refunded` };
    return { decision: 'allow' };
  }
}
