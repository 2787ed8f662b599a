/**
 * The OpenAPI schemas of DESIGN §7: request bodies generated from the same zod schemas that validate
 * them, response bodies written out here to the letter of the contract.
 */
import type { SchemaObject } from '@nestjs/swagger';
import { z } from 'zod';
import { webhookConfigSchema } from '../../webhooks/webhook-config.schema.js';
import { createOperationBody, interventionBody, toolResultBody, webhookField } from './request-bodies.js';

function requestSchema(schema: z.ZodType): SchemaObject {
  const webhook = z.toJSONSchema(webhookConfigSchema, { target: 'openapi-3.0', io: 'input' });
  return z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'any',
    // The webhook is validated by the runtime (W4); its schema is the one `webhook-config.schema.ts` declares.
    override: (context) => {
      if (context.zodSchema === webhookField) Object.assign(context.jsonSchema, webhook, { description: 'The webhook configuration (SPEC W4).' });
    },
  }) as SchemaObject;
}

export const CREATE_OPERATION_BODY = requestSchema(createOperationBody);
export const INTERVENTION_BODY = requestSchema(interventionBody);
export const TOOL_RESULT_BODY = requestSchema(toolResultBody);

const string: SchemaObject = { type: 'string' };
const STATUS: SchemaObject = { type: 'string', enum: ['running', 'waiting', 'completed'] };

export const ERROR_RESPONSE: SchemaObject = {
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: string, message: string } } },
};

export const CREATED_OPERATION: SchemaObject = {
  type: 'object',
  required: ['operationId', 'status'],
  properties: { operationId: { type: 'string', format: 'uuid' }, status: STATUS },
};

export const OPERATION: SchemaObject = {
  type: 'object',
  required: ['operationId', 'agentId', 'status', 'usage'],
  properties: {
    operationId: { type: 'string', format: 'uuid' },
    agentId: string,
    status: STATUS,
    reason: { type: 'string', enum: ['done', 'error', 'interrupted', 'max_steps', 'cost_limit', 'token_limit', 'tool_limit', 'blocked'] },
    pendingTools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['toolCallId', 'idempotencyKey', 'identifier', 'apiName', 'args', 'kind'],
        properties: { toolCallId: string, idempotencyKey: string, identifier: string, apiName: string, args: { type: 'object' }, kind: { type: 'string', enum: ['approval', 'deferred'] } },
      },
    },
    usage: {
      type: 'object',
      required: ['inputTokens', 'outputTokens', 'costUsd'],
      properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, costUsd: { type: 'number' } },
    },
    error: {
      type: 'object',
      description:
        'reason error: the error type and a summary built from our own fields (model id, HTTP status, an unset variable), never an error message; reason token_limit or tool_limit: the limit reached as the type (maxTokens, maxToolCalls, perTool, maxRepeatedFailures) and a summary naming it and the tool that did not run',
      required: ['type', 'summary'],
      properties: { type: string, summary: string },
    },
  },
};

const USAGE: SchemaObject = {
  type: 'object',
  required: ['inputTokens', 'outputTokens', 'costUsd'],
  properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, costUsd: { type: 'number' } },
};

export const OPERATION_LIST: SchemaObject = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      description: "The caller's own operations, newest first (createdAt, then operationId, descending)",
      items: {
        type: 'object',
        required: ['operationId', 'agentId', 'status', 'createdAt', 'updatedAt', 'steps', 'usage'],
        properties: {
          operationId: { type: 'string', format: 'uuid' },
          agentId: string,
          status: STATUS,
          reason: { type: 'string', enum: ['done', 'error', 'interrupted', 'max_steps', 'cost_limit', 'token_limit', 'tool_limit', 'blocked'] },
          createdAt: { type: 'string', format: 'date-time' },
          updatedAt: { type: 'string', format: 'date-time' },
          steps: { type: 'integer', description: 'Finished steps' },
          usage: USAGE,
        },
      },
    },
    nextCursor: { type: 'string', description: 'Present when older operations may follow: pass it back as cursor (opaque)' },
  },
};

export const MESSAGES: SchemaObject = {
  type: 'object',
  required: ['messages'],
  properties: {
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'role', 'content'],
        properties: {
          id: string,
          role: { type: 'string', enum: ['user', 'assistant', 'tool'] },
          content: string,
          toolCallId: string,
          identifier: string,
          apiName: string,
          error: { type: 'string', enum: ['hook_denied', 'hook_control_error'] },
          state: { type: 'object', description: "The tool's own state; a hook's verdict is under state.hookVerdict." },
        },
      },
    },
  },
};

export const TIMELINE: SchemaObject = {
  type: 'object',
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['seq', 'at', 'point', 'hookId', 'source', 'outcome', 'latencyMs'],
        properties: {
          seq: { type: 'integer' },
          at: { type: 'string', format: 'date-time' },
          point: string,
          hookId: string,
          source: { type: 'string', enum: ['decorator', 'config', 'caller', 'environment', 'runtime'] },
          outcome: { type: 'string', enum: ['ok', 'mocked', 'allowed', 'denied', 'notification', 'error'] },
          errorCode: string,
          latencyMs: { type: 'number' },
          idempotencyKey: { type: 'string', description: "A tool point's row: its call's idempotency key (SPEC F1)." },
        },
      },
    },
  },
};

export const OPERATION_STATUS: SchemaObject = { type: 'object', required: ['status'], properties: { status: STATUS } };

export const CANCELLED: SchemaObject = {
  type: 'object',
  required: ['operationId', 'status'],
  properties: { operationId: { type: 'string', format: 'uuid' }, status: STATUS },
};

export const PUBLISHED: SchemaObject = { type: 'object', required: ['published'], properties: { published: { type: 'boolean', enum: [true] } } };
