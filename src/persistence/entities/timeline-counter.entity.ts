/**
 * `agent_hooks_timeline_counters`: the last timeline `seq` given out per operation. A batch of outcomes
 * bumps its operation's row once (an upsert that returns the new value) and numbers its rows below it, so
 * `seq` counts 1, 2, … within each operation (DESIGN §7) without reading the timeline, and the row lock
 * makes processes sharing PostgreSQL take turns.
 */
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { idColumn, integerColumn, primaryColumn } from '../columns.js';

@Entity({ name: 'agent_hooks_timeline_counters' })
export class TimelineCounterEntity {
  @PrimaryColumn(primaryColumn(idColumn, 'operation_id', 'agent_hooks_timeline_counters_pk'))
  operationId!: string;

  @Column(integerColumn('last_seq'))
  lastSeq!: number;
}
