/** The app's local `@Tool` methods by `identifier/apiName`; filled once at bootstrap. One registry per app. */
import { Injectable } from '@nestjs/common';
import type { LocalTool } from './local-tool.js';
import { ToolConfigurationError } from './tool-errors.js';

@Injectable()
export class LocalToolRegistry {
  private readonly tools = new Map<string, LocalTool>();

  /** Adds tools; a name taken twice (in this batch or before) fails, naming both methods. Nothing is added then. */
  add(tools: readonly LocalTool[]): void {
    const batch = new Map<string, LocalTool>();
    for (const tool of tools) {
      const name = nameOf(tool);
      const taken = this.tools.get(name) ?? batch.get(name);
      if (taken) {
        throw new ToolConfigurationError(`@Tool on ${tool.origin}: the tool name ${name} is already used by ${taken.origin}`);
      }
      batch.set(name, tool);
    }
    for (const [name, tool] of batch) this.tools.set(name, tool);
  }

  get(identifier: string, apiName: string): LocalTool | undefined {
    return this.tools.get(`${identifier}/${apiName}`);
  }

  /** All local tools in registration (discovery) order. */
  all(): readonly LocalTool[] {
    return [...this.tools.values()];
  }
}

function nameOf(tool: LocalTool): string {
  return `${tool.definition.identifier}/${tool.definition.apiName}`;
}
