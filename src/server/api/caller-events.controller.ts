/** `GET /v1/events` (v0.2): the caller's operation changes as Server-Sent Events (DESIGN §7). */
import { Controller, Get, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrors } from './api-docs.decorators.js';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { CallerGuard } from './caller.guard.js';
import { CallerEventStreams, STREAMS_PER_OWNER } from './caller-event-stream.js';
import { CurrentCaller, type Caller } from './caller.js';

@ApiTags('operations')
@ApiBearerAuth()
@UseGuards(CallerGuard)
@UseFilters(ApiExceptionFilter)
@Controller('v1')
export class CallerEventsController {
  constructor(private readonly streams: CallerEventStreams) {}

  @Get('events')
  @ApiOperation({
    summary: "Live changes of all the caller's operations (Server-Sent Events)",
    description:
      'event "operation": an operation as GET /v1/operations lists it, after it was created or its status, step or usage changed ' +
      '(changes that come together are sent once, as they stand). event "resync": changes may have been missed; re-read the list. ' +
      'Only the caller\'s own operations; the stream stays open until the client closes it (or falls more than 1 MB behind). ' +
      `To miss nothing, open it first and read the list once it is open. At most ${STREAMS_PER_OWNER} streams per caller at once (429 too_many_streams).`,
  })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiErrors(401, 429)
  async events(@CurrentCaller() caller: Caller, @Res() response: Response): Promise<void> {
    await this.streams.stream(caller, response);
  }
}
