/**
 * Where a `matcher` key may appear (W5): on tool points only. Elsewhere the key itself is refused at
 * registration, even `''` or `'*'`, so a hook author never believes a non-tool hook is filtered by tool.
 * Shared by every registration path (caller hooks, `@OnHook`, agents.yaml, the webhook schema).
 */
import { HOOK_POINT_NAMES, HOOK_POINTS, type HookPoint } from './hook-points.js';

/** The tool points of both families, named in messages. */
export const TOOL_POINTS: readonly HookPoint[] = Object.freeze(HOOK_POINT_NAMES.filter((point) => HOOK_POINTS[point].toolEvent));
const TOOL_POINT_LIST = TOOL_POINTS.join(', ');

/** Why `matcher` may not be given at `point`, or `undefined` when it may (or is absent). Never quotes it. */
export function matcherScopeProblem(point: HookPoint, matcher: unknown): string | undefined {
  if (matcher === undefined || HOOK_POINTS[point].toolEvent) return undefined;
  return `a matcher applies to tool points only, not ${point} (tool points: ${TOOL_POINT_LIST}); remove the key, even '' or '*'`;
}
