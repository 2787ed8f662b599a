/**
 * The host's own routes around the agent: start a refund request for the signed-in user, list that user's
 * calls waiting for approval (through the runtime's read API) and approve one (through the runtime).
 */
import { BadRequestException, Body, Controller, ForbiddenException, Get, HttpCode, NotFoundException, Param, Post, Req } from '@nestjs/common';
import { AgentRuntime, type PendingToolView } from 'nest-agent-hooks';
import type { SignedInRequest } from '../auth/host-auth.guard.js';
import { agentOwner } from '../auth/users.js';

const ORDER = /^[A-Z]-[0-9]{1,8}$/;

export interface PendingApproval {
  operationId: string;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
}

@Controller('support')
export class SupportController {
  constructor(private readonly runtime: AgentRuntime) {}

  /** `{ order: 'A-1001' }` → the operation that refunds it, owned by the signed-in user. */
  @Post('refunds')
  async requestRefund(@Req() request: SignedInRequest, @Body() body: { order?: unknown } | undefined): Promise<{ operationId: string }> {
    const order = body?.order;
    if (typeof order !== 'string' || !ORDER.test(order)) throw new BadRequestException('order: expected an order number such as A-1001');
    const { operationId } = await this.runtime.execAgent({ agentId: 'support', prompt: order, ownerId: userId(request) });
    return { operationId };
  }

  @Get('approvals')
  async approvals(@Req() request: SignedInRequest): Promise<{ items: PendingApproval[] }> {
    return { items: await this.pendingApprovals(userId(request)) };
  }

  /** Only a call in the user's own list can be approved: another user's operation is a 404 here too. */
  @Post('approvals/:operationId/:toolCallId/approve')
  @HttpCode(204)
  async approve(@Req() request: SignedInRequest, @Param('operationId') operationId: string, @Param('toolCallId') toolCallId: string): Promise<void> {
    const user = userId(request);
    const pending = await this.pendingApprovals(user, operationId);
    if (!pending.some((approval) => approval.toolCallId === toolCallId)) throw new NotFoundException('no such approval waiting for you');
    await this.runtime.approve(operationId, toolCallId, { decidedBy: user });
  }

  /** The user's waiting operations, page by page (keyset cursors), and what each waits for. */
  private async pendingApprovals(ownerId: string, onlyOperation?: string): Promise<PendingApproval[]> {
    const approvals: PendingApproval[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.runtime.list({ ownerId, status: 'waiting', limit: 100, ...(cursor ? { cursor } : {}) });
      for (const item of page.items) {
        if (onlyOperation !== undefined && item.operationId !== onlyOperation) continue;
        const operation = await this.runtime.get(item.operationId);
        for (const tool of operation?.pendingTools ?? []) if (tool.kind === 'approval') approvals.push(view(item.operationId, tool));
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return approvals;
  }
}

function view(operationId: string, tool: PendingToolView): PendingApproval {
  return { operationId, toolCallId: tool.toolCallId, tool: `${tool.identifier}/${tool.apiName}`, args: tool.args };
}

/** The guard signed the request in; these routes also need the role the mounted routes need (users.ts). */
function userId(request: SignedInRequest): string {
  const owner = agentOwner(request.user);
  if (owner === undefined) throw new ForbiddenException('this account may not use the agents');
  return owner;
}
