import { Injectable } from '@nestjs/common';
import { Tool } from '../runtime/tools/tool.decorator.js';

/** The standalone server's built-in tools, used by the offline quickstart config (`clock/now`, `clock/set`). */
@Injectable()
export class ClockTools {
  @Tool({
    identifier: 'clock',
    apiName: 'now',
    description: 'The current date and time, as an ISO-8601 UTC timestamp.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  })
  now(): string {
    return new Date().toISOString();
  }

  /**
   * The quickstart's example of a state-changing tool, which its policy denies (plugins/hooks/
   * quickstart-hooks.ts). It changes nothing even when a config lets it run.
   */
  @Tool({
    identifier: 'clock',
    apiName: 'set',
    description: "Set the server's clock (not possible: this tool only says so).",
    parameters: { type: 'object', properties: { time: { type: 'string' } }, required: ['time'], additionalProperties: false },
  })
  set(): string {
    return "This server's clock cannot be set.";
  }
}
