/**
 * SPEC F6: an approval may carry new arguments. Before anything is stored they are checked — a JSON object
 * within G6's limits (1 MB serialized, 64 levels deep: what a request body may carry, so the library and
 * HTTP refuse the same values) that the tool's JSON Schema accepts. A refusal names the path and the rule,
 * never a value (S1), and is HTTP 400. The decision then stores them with who decided (`decideDurably`), and
 * the call runs with them: they are the effective `args` of its tool events (T1).
 */
import { Inject, Injectable } from '@nestjs/common';
import { MAX_EDITED_ARGS_BYTES, MAX_JSON_DEPTH } from '../hooks/input-limits.js';
import type { ModelToolCall } from './models/chat-model.js';
import { InvalidEditedArgumentsError } from './runtime-errors.js';
import { RUNTIME_STORE, type RuntimeStore, type StoredIntervention } from './runtime-store.port.js';
import { TOOL_CATALOG, ToolError, type ToolCatalog } from './tools/tool-types.js';

@Injectable()
export class ApprovalEdits {
  constructor(
    @Inject(RUNTIME_STORE) private readonly store: RuntimeStore,
    @Inject(TOOL_CATALOG) private readonly catalog: ToolCatalog,
  ) {}

  /**
   * The edited arguments of the pending approval `toolCallId`, checked; throws `InvalidEditedArgumentsError`.
   * A call that is not a pending approval is left to the decision itself to report (404, 409).
   */
  async check(operationId: string, toolCallId: string, args: unknown): Promise<Record<string, unknown>> {
    if (args === null || typeof args !== 'object' || Array.isArray(args)) throw new InvalidEditedArgumentsError('args: must be a JSON object');
    if (nestedDeeperThan(args, MAX_JSON_DEPTH)) throw new InvalidEditedArgumentsError(`args: is nested deeper than ${MAX_JSON_DEPTH} levels`);
    let serialized: string;
    try {
      serialized = JSON.stringify(args);
    } catch {
      throw new InvalidEditedArgumentsError('args: must be JSON data');
    }
    if (Buffer.byteLength(serialized, 'utf8') > MAX_EDITED_ARGS_BYTES) throw new InvalidEditedArgumentsError(`args: must be at most ${MAX_EDITED_ARGS_BYTES} bytes as JSON`);
    // Stored and run as JSON: what is checked is exactly what will be stored (no functions, no undefined).
    const plain = JSON.parse(serialized) as Record<string, unknown>;
    const item = (await this.store.interventions(operationId)).find((i) => i.toolCallId === toolCallId && i.kind === 'approval' && i.status === 'pending');
    if (!item) return plain;
    const tool = await this.catalog.find(item.identifier, item.apiName);
    if (!tool) throw new InvalidEditedArgumentsError(`args: ${item.identifier}/${item.apiName} is not available to check them against its schema`);
    try {
      this.catalog.checkArguments(tool, plain);
    } catch (error) {
      if (error instanceof ToolError) throw new InvalidEditedArgumentsError(`args: ${error.message}`);
      throw error;
    }
    return plain;
  }
}

/** The call as it runs: with the arguments its approval was given (F6), else as the model made it. */
export function withApprovedArgs(call: ModelToolCall, item: StoredIntervention | undefined): ModelToolCall {
  if (item?.kind !== 'approval' || item.editedArgs === undefined) return call;
  // The human's arguments replace the model's, including arguments that were not valid JSON.
  const { invalidArgs: _unused, ...rest } = call;
  return { ...rest, args: item.editedArgs };
}

/** Whether `value` nests objects or arrays deeper than `max` levels (its own stack: no depth overflows it). */
function nestedDeeperThan(value: object, max: number): boolean {
  const stack: Array<{ value: object; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (item.depth > max) return true;
    for (const child of Object.values(item.value)) if (child !== null && typeof child === 'object') stack.push({ value: child as object, depth: item.depth + 1 });
  }
  return false;
}
