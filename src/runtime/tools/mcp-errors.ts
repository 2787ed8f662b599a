/**
 * What can go wrong talking to an MCP server, and the `ToolError` each becomes. Messages name the server,
 * the MCP method and the HTTP status — never a response body, header value or argument (S1). The SDK's own
 * HTTP error messages embed the response body, so they are never passed on.
 */
import { McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorType } from '../../hooks/hook-errors.js';
import { ToolError } from './tool-types.js';

/** An MCP hook failed under `failure_policy: fail`: the request was not sent (before) or its answer dropped (after). */
export class McpHookAbortError extends Error {
  override readonly name = 'McpHookAbortError';

  constructor(
    readonly serverId: string,
    readonly method: string,
    readonly point: 'before_mcp_request' | 'after_mcp_response',
    cause: unknown,
  ) {
    super(
      point === 'before_mcp_request'
        ? `MCP request ${method} to server ${serverId} was not sent: a before_mcp_request hook failed (${errorType(cause)})`
        : `MCP request ${method} to server ${serverId} was dropped: an after_mcp_response hook failed (${errorType(cause)})`,
      { cause },
    );
  }
}

/** The server could not be reached at all (refused, DNS, reset before any response). */
export class McpUnreachableError extends Error {
  override readonly name = 'McpUnreachableError';

  constructor(
    readonly serverId: string,
    cause: unknown,
  ) {
    super(`MCP server ${serverId} is unreachable`, { cause });
  }
}

/** `connect`: initialize + initialized notification (+ listing); `call`: tools/call. */
export type McpPhase = 'connect' | 'list' | 'call';

const PHASE_TEXT: Record<McpPhase, string> = { connect: 'while connecting', list: 'to tools/list', call: 'to tools/call' };

export function unavailable(serverId: string): ToolError {
  return new ToolError('unavailable', `MCP server ${serverId} is unreachable`);
}

/** Maps a failure of one MCP phase to the `ToolError` the runtime reports. */
export function toToolError(serverId: string, phase: McpPhase, error: unknown): ToolError {
  if (error instanceof ToolError) return error;
  if (error instanceof McpHookAbortError) {
    const hookError = error.cause;
    return new ToolError('execution_failed', error.message, errorType(hookError), { cause: hookError });
  }
  if (error instanceof McpUnreachableError) return new ToolError('unavailable', error.message, 'ToolError', { cause: error.cause });
  if (error instanceof StreamableHTTPError) {
    const status = error.code !== undefined && error.code > 0 ? `HTTP ${error.code}` : 'an unexpected response';
    // A server that refuses to open a session is unavailable; a refused call is a failed call.
    return phase === 'call'
      ? new ToolError('execution_failed', `MCP server ${serverId} answered ${status} ${PHASE_TEXT[phase]}`, 'StreamableHTTPError', { cause: error })
      : new ToolError('unavailable', `MCP server ${serverId} is unavailable: ${status} ${PHASE_TEXT[phase]}`, 'StreamableHTTPError', { cause: error });
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) {
      return phase === 'call'
        ? new ToolError('timeout', `MCP server ${serverId} did not answer tools/call in time`, 'McpError', { cause: error })
        : new ToolError('unavailable', `MCP server ${serverId} is unavailable: no answer ${PHASE_TEXT[phase]} in time`, 'McpError', { cause: error });
    }
    // A JSON-RPC error the server chose to send (unknown tool, invalid params): its message is meant for the caller.
    return new ToolError('execution_failed', `MCP server ${serverId} returned an error ${PHASE_TEXT[phase]}: ${error.message}`, 'McpError', { cause: error });
  }
  return new ToolError('execution_failed', `MCP server ${serverId} failed ${PHASE_TEXT[phase]} (${errorType(error)})`, errorType(error), { cause: error });
}
