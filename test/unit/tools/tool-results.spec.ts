import { fromMcpResult } from '../../../src/runtime/tools/mcp-result.js';
import { mcpMethodOf } from '../../../src/runtime/tools/mcp-fetch.js';
import { toToolResult } from '../../../src/runtime/tools/tool-result.js';

describe('tools: local results (DESIGN §6 @Tool return values)', () => {
  it('a string becomes { content, success: true }', () => {
    expect(toToolResult('12:00')).toEqual({ content: '12:00', success: true });
  });

  it('a ToolResult-like object keeps content, success, data and state', () => {
    expect(toToolResult({ content: 'no', success: false, data: { rows: 1 }, state: { type: 'blocked' }, extra: 1 })).toEqual({
      content: 'no',
      success: false,
      data: { rows: 1 },
      state: { type: 'blocked' },
    });
    expect(toToolResult({ content: 'yes' })).toEqual({ content: 'yes', success: true });
  });

  it('other values are JSON-stringified into content; undefined is empty', () => {
    expect(toToolResult({ hour: 12 })).toEqual({ content: '{"hour":12}', success: true });
    expect(toToolResult([1, 2])).toEqual({ content: '[1,2]', success: true });
    expect(toToolResult(42)).toEqual({ content: '42', success: true });
    expect(toToolResult(null)).toEqual({ content: 'null', success: true });
    expect(toToolResult(undefined)).toEqual({ content: '', success: true });
  });
});

describe('tools: MCP results', () => {
  it('joins text content, keeps the full content and structured content in data', () => {
    const result = fromMcpResult({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' } as never,
        { type: 'text', text: 'second' },
      ],
      structuredContent: { total: 2 },
    });
    expect(result.content).toBe('first\n[image image/png]\nsecond');
    expect(result.success).toBe(true);
    expect(result.data).toEqual({
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'text', text: 'second' },
      ],
      structuredContent: { total: 2 },
    });
  });

  it('isError becomes success: false; structured-only results are stringified into content', () => {
    expect(fromMcpResult({ content: [{ type: 'text', text: 'boom' }], isError: true })).toMatchObject({ content: 'boom', success: false });
    expect(fromMcpResult({ content: [], structuredContent: { n: 1 } }).content).toBe('{"n":1}');
  });
});

describe('tools: MCP request methods (McpRequestContext.method)', () => {
  it('POSTed JSON-RPC messages are named by their method', () => {
    expect(mcpMethodOf('POST', JSON.stringify({ method: 'initialize', params: {}, jsonrpc: '2.0', id: 0 }))).toBe('initialize');
    expect(mcpMethodOf('POST', JSON.stringify({ method: 'notifications/initialized', jsonrpc: '2.0' }))).toBe('notifications/initialized');
    expect(mcpMethodOf('POST', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'x' } }))).toBe('tools/call');
    expect(mcpMethodOf('post', JSON.stringify([{ jsonrpc: '2.0', method: 'a' }, { jsonrpc: '2.0', method: 'b' }]))).toBe('a,b');
  });

  it('other requests are named by their HTTP method', () => {
    expect(mcpMethodOf('GET', undefined)).toBe('GET');
    expect(mcpMethodOf('DELETE', undefined)).toBe('DELETE');
    expect(mcpMethodOf('POST', JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} }))).toBe('POST');
    expect(mcpMethodOf('POST', 'not json')).toBe('POST');
  });
});
