/**
 * `POST /v1/operations`, `GET /v1/operations` (the list), `GET /v1/operations/:id`, `…/messages`, `…/timeline`, `POST …/cancel`
 * (DESIGN §7). Every route is the caller's: another owner's operation is a 404.
 */
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { AgentRuntime } from '../../runtime/agent-runtime.js';
import { ApiErrors, ApiOperationId } from './api-docs.decorators.js';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { CallerGuard } from './caller.guard.js';
import { checkCallerHooks } from './caller-hook-policy.js';
import { CurrentCaller, type Caller } from './caller.js';
import { IDEMPOTENCY_KEY_HEADER, parseIdempotencyKey } from './idempotency-key.js';
import { LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX, LIST_STATUSES, parseListQuery } from './list-query.js';
import { CANCELLED, CREATE_OPERATION_BODY, CREATED_OPERATION, MESSAGES, OPERATION, OPERATION_LIST, TIMELINE } from './openapi-schemas.js';
import { execAgentInput } from './operation-input.js';
import { requestDigest } from './request-digest.js';
import { OperationReader } from './operation-reader.js';
import type { MessageView, OperationListView, OperationView, TimelineItemView } from '../../runtime/reading/operation-views.js';
import { OperationIdPipe } from './path-params.js';
import { createOperationBody } from './request-bodies.js';
import { parseRequest } from './request-validation.js';
import { SERVER_API_OPTIONS, type ServerApiOptions } from './server-api.options.js';

type Status = OperationView['status'];

@ApiTags('operations')
@ApiBearerAuth()
@ApiErrors(401)
@UseGuards(CallerGuard)
@UseFilters(ApiExceptionFilter)
@Controller('v1/operations')
export class OperationsController {
  constructor(
    private readonly runtime: AgentRuntime,
    private readonly reader: OperationReader,
    @Inject(SERVER_API_OPTIONS) private readonly options: ServerApiOptions,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Start an operation', description: 'context.userId is always the caller’s owner id. Caller hooks are webhook-only.' })
  @ApiHeader({ name: IDEMPOTENCY_KEY_HEADER, required: false, description: 'A retry with the same key and body returns the same operation; another body is 422 idempotency_key_reused' })
  @ApiBody({ schema: CREATE_OPERATION_BODY })
  @ApiResponse({ status: 201, schema: CREATED_OPERATION })
  @ApiErrors(400, 404, 413, 422)
  async create(
    @Body() body: unknown,
    @Headers(IDEMPOTENCY_KEY_HEADER.toLowerCase()) idempotencyHeader: string | undefined,
    @CurrentCaller() caller: Caller,
  ): Promise<{ operationId: string; status: Status }> {
    const input = parseRequest(createOperationBody, body);
    const idempotencyKey = parseIdempotencyKey(idempotencyHeader);
    checkCallerHooks(input.hooks ?? [], this.options.callerEnvAllowlist);
    // G8: a retry must repeat the body; the same key with another body is a 422.
    const digest = idempotencyKey !== undefined ? requestDigest(body) : undefined;
    const { operationId, done } = await this.runtime.execAgent(execAgentInput(input, caller, idempotencyKey, digest));
    // Nobody here waits for the end; a watcher stopped by shutdown must not become an unhandled rejection.
    done.catch(() => undefined);
    const operation = await this.reader.find(operationId);
    return { operationId, status: operation?.status ?? 'running' };
  }

  @Get()
  @ApiOperation({ summary: "The caller's operations, newest first, a keyset page at a time", description: 'Follow nextCursor until it is absent; operations started meanwhile are newer and do not shift the pages.' })
  @ApiQuery({ name: 'status', required: false, schema: { type: 'string', enum: [...LIST_STATUSES] } })
  @ApiQuery({ name: 'agentId', required: false, schema: { type: 'string' } })
  @ApiQuery({ name: 'limit', required: false, schema: { type: 'integer', minimum: 1, maximum: LIST_LIMIT_MAX, default: LIST_LIMIT_DEFAULT } })
  @ApiQuery({ name: 'cursor', required: false, description: 'The nextCursor of the previous page (opaque)', schema: { type: 'string' } })
  @ApiResponse({ status: 200, schema: OPERATION_LIST })
  @ApiErrors(400)
  async list(@Query() query: unknown, @CurrentCaller() caller: Caller): Promise<OperationListView> {
    return this.reader.list(caller, parseListQuery(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'An operation: status, terminal reason, pending tools, usage' })
  @ApiOperationId()
  @ApiResponse({ status: 200, schema: OPERATION })
  @ApiErrors(404)
  async get(@Param('id', OperationIdPipe) id: string, @CurrentCaller() caller: Caller): Promise<OperationView> {
    return this.reader.view(await this.reader.owned(id, caller));
  }

  @Get(':id/messages')
  @ApiOperation({ summary: 'The published conversation, exactly as published' })
  @ApiOperationId()
  @ApiResponse({ status: 200, schema: MESSAGES })
  @ApiErrors(404)
  async messages(@Param('id', OperationIdPipe) id: string, @CurrentCaller() caller: Caller): Promise<{ messages: MessageView[] }> {
    await this.reader.owned(id, caller);
    return { messages: await this.reader.messages(id) };
  }

  @Get(':id/timeline')
  @ApiOperation({ summary: 'The hook timeline: one item per hook invocation, never a payload' })
  @ApiOperationId()
  @ApiResponse({ status: 200, schema: TIMELINE })
  @ApiErrors(404)
  async timeline(@Param('id', OperationIdPipe) id: string, @CurrentCaller() caller: Caller): Promise<{ items: TimelineItemView[] }> {
    await this.reader.owned(id, caller);
    return { items: await this.reader.timeline(id) };
  }

  @Post(':id/cancel')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel: the operation ends with reason interrupted (no-op when already completed)' })
  @ApiOperationId()
  @ApiResponse({ status: 202, schema: CANCELLED })
  @ApiErrors(404)
  async cancel(@Param('id', OperationIdPipe) id: string, @CurrentCaller() caller: Caller): Promise<{ operationId: string; status: Status }> {
    await this.reader.owned(id, caller);
    await this.runtime.cancel(id);
    const operation = await this.reader.owned(id, caller);
    return { operationId: id, status: operation.status };
  }
}
