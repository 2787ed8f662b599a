/**
 * The host's tool: refunds an order, writing to the host's own `refunds` table. It runs only after a
 * person approved the call (agents.yaml `approval:`) and the policy allowed it (refund-policy.hooks.ts).
 */
import { Injectable } from '@nestjs/common';
import { Tool, type LocalToolContext } from 'nest-agent-hooks';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Refund } from '../database/refund.entity.js';

@Injectable()
export class RefundTool {
  constructor(private readonly dataSource: DataSource) {}

  @Tool({
    identifier: 'payments',
    apiName: 'refund',
    description: 'Refunds an order in full',
    parameters: { type: 'object', properties: { order: { type: 'string', pattern: '^[A-Z]-[0-9]{1,8}$' } }, required: ['order'], additionalProperties: false },
  })
  async refund(args: Record<string, unknown>, context: LocalToolContext): Promise<string> {
    const order = String(args.order);
    // Keyed by the call's idempotency key: a re-run of the same call finds its row and refunds nothing twice.
    await this.dataSource
      .createQueryBuilder()
      .insert()
      .into(Refund)
      .values({ id: randomUUID(), order, operationId: context.operationId, idempotencyKey: context.idempotencyKey })
      .orIgnore()
      .execute();
    return `order ${order} refunded`;
  }
}
