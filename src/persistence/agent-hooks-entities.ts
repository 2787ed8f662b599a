/** The entity set (DESIGN §5): add these to a host DataSource's `entities` when `database: 'host'`. */
import { HookOutcomeEntity } from './entities/hook-outcome.entity.js';
import { InterventionEntity } from './entities/intervention.entity.js';
import { MessageEntity } from './entities/message.entity.js';
import { OperationCallerHookEntity } from './entities/operation-caller-hook.entity.js';
import { OperationEntity } from './entities/operation.entity.js';
import { OwedWorkEntity } from './entities/owed-work.entity.js';
import { TimelineCounterEntity } from './entities/timeline-counter.entity.js';
import { ToolResultPlaceholderEntity } from './entities/tool-result-placeholder.entity.js';

export const AGENT_HOOKS_ENTITIES = [
  OperationEntity,
  OperationCallerHookEntity,
  MessageEntity,
  InterventionEntity,
  ToolResultPlaceholderEntity,
  HookOutcomeEntity,
  TimelineCounterEntity,
  OwedWorkEntity,
] as const;

/** Every table the migrations create (the migrations table aside). */
export const AGENT_HOOKS_TABLES = [
  'agent_hooks_operations',
  'agent_hooks_operation_hooks',
  'agent_hooks_messages',
  'agent_hooks_interventions',
  'agent_hooks_tool_result_placeholders',
  'agent_hooks_hook_outcomes',
  'agent_hooks_timeline_counters',
  'agent_hooks_owed_work',
] as const;
