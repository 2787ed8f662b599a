/**
 * SPEC F3: results that arrive after their call's deadline. The call was already published as a `timeout`
 * error; the late value is dropped and only announced here, so the ops metrics can count tools that ignore
 * their abort signal. Announced values carry the tool's source only (a closed set), never its name or result.
 */
import { Injectable } from '@nestjs/common';
import { Subject, type Observable } from 'rxjs';
import type { ToolDefinition } from './tool-types.js';

export interface LateToolResult {
  readonly source: ToolDefinition['source'];
}

@Injectable()
export class LateToolResults {
  private readonly late = new Subject<LateToolResult>();
  readonly late$: Observable<LateToolResult> = this.late.asObservable();

  record(result: LateToolResult): void {
    this.late.next(result);
  }
}
