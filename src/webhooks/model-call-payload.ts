/**
 * A model-call event as a notification webhook receives it (SPEC K2, B2, S2): metadata only — model,
 * purpose, message count, finish reason, usage — never the messages, the tool names or the answer.
 * Control receivers get the event in full, as tool controls get arguments and results.
 */
const CONTENT_POINTS: ReadonlySet<string> = new Set(['beforeModelCall', 'afterModelCall']);

export function isModelContentPoint(point: string): boolean {
  return CONTENT_POINTS.has(point);
}

export function modelCallMetadata(event: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const { messages, toolNames: _toolNames, response, ...rest } = event;
  void _toolNames;
  const metadata: Record<string, unknown> = { ...rest, messageCount: Array.isArray(messages) ? messages.length : 0 };
  if (response !== null && typeof response === 'object') {
    const { finishReason, usage } = response as { finishReason?: unknown; usage?: unknown };
    if (finishReason !== undefined) metadata['finishReason'] = finishReason;
    if (usage !== undefined) metadata['usage'] = usage;
  }
  return metadata;
}
