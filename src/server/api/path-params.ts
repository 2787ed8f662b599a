/**
 * Path parameters checked before any store sees them: an operation id is a UUID (the runtime makes them),
 * a tool call id a short printable string. Anything else names nothing that exists: 404, not a query.
 */
import { Injectable, type PipeTransform } from '@nestjs/common';
import { notFound } from './api-error.js';
import { hasControlCharacter } from '../../common/control-characters.js';
import { isOperationId } from '../../runtime/reading/operation-id.js';

/** Tool call ids are stored in 255-character columns. */
const TOOL_CALL_ID_MAX = 255;

@Injectable()
export class OperationIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!isOperationId(value)) throw notFound('no such operation');
    return value;
  }
}

@Injectable()
export class ToolCallIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (typeof value !== 'string' || value.length === 0 || value.length > TOOL_CALL_ID_MAX || hasControlCharacter(value)) throw notFound('no such tool call');
    return value;
  }
}
