import { Injectable } from '@nestjs/common';
import { Tool } from '../runtime/tools/tool.decorator.js';

/** The standalone server's built-in tool used by the offline quickstart config (`clock/now`). */
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
}
