/**
 * The caller's answers to a waiting operation (DESIGN §7): a human decision on a pending approval, and
 * the result of a deferred tool call. The runtime arbitrates in the database: a second decision is 409
 * `not_pending`, a second result 409 `already_completed` (L4), and once the operation is completed either
 * is 409 `operation_completed` (G5).
 */
import { Body, Controller, HttpCode, Param, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AgentRuntime } from '../../runtime/agent-runtime.js';
import { ApiErrors, ApiOperationId, ApiToolCallId } from './api-docs.decorators.js';
import { invalidRequest } from './api-error.js';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { CallerGuard } from './caller.guard.js';
import { CurrentCaller, type Caller } from './caller.js';
import { INTERVENTION_BODY, OPERATION_STATUS, PUBLISHED, TOOL_RESULT_BODY } from './openapi-schemas.js';
import { OperationReader } from './operation-reader.js';
import type { OperationView } from '../../runtime/reading/operation-views.js';
import { OperationIdPipe, ToolCallIdPipe } from './path-params.js';
import { interventionBody, toolResultBody } from './request-bodies.js';
import { parseRequest } from './request-validation.js';

@ApiTags('operations')
@ApiBearerAuth()
@ApiErrors(401)
@UseGuards(CallerGuard)
@UseFilters(ApiExceptionFilter)
@Controller('v1/operations/:id')
export class OperationDecisionsController {
  constructor(
    private readonly runtime: AgentRuntime,
    private readonly reader: OperationReader,
  ) {}

  @Post('interventions/:toolCallId')
  @HttpCode(200)
  @ApiOperation({ summary: 'Decide a pending approval: approve, reject (the operation stops) or rejectAndContinue' })
  @ApiOperationId()
  @ApiToolCallId()
  @ApiBody({ schema: INTERVENTION_BODY })
  @ApiResponse({ status: 200, description: "The operation's status after the decision", schema: OPERATION_STATUS })
  @ApiErrors(400, 404, 409, 413, 424)
  async decide(
    @Param('id', OperationIdPipe) id: string,
    @Param('toolCallId', ToolCallIdPipe) toolCallId: string,
    @Body() body: unknown,
    @CurrentCaller() caller: Caller,
  ): Promise<{ status: OperationView['status'] }> {
    await this.reader.owned(id, caller);
    const { action, reason, args } = parseRequest(interventionBody, body);
    const decidedBy = caller.ownerId;
    if (args !== undefined && action !== 'approve') throw invalidRequest('args: only an approval may carry arguments');
    if (action === 'approve') await this.runtime.approve(id, toolCallId, { decidedBy, ...(args !== undefined ? { args } : {}) });
    else await this.runtime.reject(id, toolCallId, { ...(reason !== undefined ? { reason } : {}), continue: action === 'rejectAndContinue', decidedBy });
    return { status: (await this.reader.owned(id, caller)).status };
  }

  @Post('tool-results/:toolCallId')
  @HttpCode(200)
  @ApiOperation({ summary: 'The result of a deferred tool call: published once, through the after-hooks (L4)' })
  @ApiOperationId()
  @ApiToolCallId()
  @ApiBody({ schema: TOOL_RESULT_BODY })
  @ApiResponse({ status: 200, schema: PUBLISHED })
  @ApiErrors(400, 404, 409, 413)
  async complete(
    @Param('id', OperationIdPipe) id: string,
    @Param('toolCallId', ToolCallIdPipe) toolCallId: string,
    @Body() body: unknown,
    @CurrentCaller() caller: Caller,
  ): Promise<{ published: true }> {
    await this.reader.owned(id, caller);
    const { content, success } = parseRequest(toolResultBody, body);
    return this.runtime.completeDeferred(id, toolCallId, { content, ...(success !== undefined ? { success } : {}) });
  }
}
