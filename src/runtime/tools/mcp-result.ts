/**
 * An MCP `tools/call` result as a `ToolResult`: text content joined into `content` (other content kinds as
 * short placeholders the model can read), the full content list and any structured content kept in `data`,
 * and `isError` → `success: false` (the server ran the tool and reports a failure).
 */
import type { ToolResult } from '../../hooks/agent-events.js';

interface McpContentItem {
  type: string;
  text?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  resource?: { uri?: string; text?: string; mimeType?: string };
}

export interface McpCallResult {
  content?: readonly McpContentItem[] | unknown;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function fromMcpResult(result: McpCallResult): ToolResult {
  const items = Array.isArray(result.content) ? (result.content as McpContentItem[]) : [];
  const parts = items.map(describe).filter((part) => part.length > 0);
  let content = parts.join('\n');
  if (content.length === 0 && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent);
  const data: Record<string, unknown> = { content: items };
  if (result.structuredContent !== undefined) data.structuredContent = result.structuredContent;
  return { content, success: result.isError !== true, data };
}

function describe(item: McpContentItem): string {
  switch (item.type) {
    case 'text':
      return item.text ?? '';
    case 'resource':
      return item.resource?.text ?? `[resource ${item.resource?.uri ?? ''}]`.trim();
    case 'resource_link':
      return `[resource ${item.uri ?? item.name ?? ''}]`;
    case 'image':
    case 'audio':
      return `[${item.type} ${item.mimeType ?? ''}]`.replace(' ]', ']');
    default:
      return `[${item.type}]`;
  }
}
