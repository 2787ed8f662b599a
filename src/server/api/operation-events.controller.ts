/** `GET /v1/operations/:id/events`: the operation's live events as Server-Sent Events (DESIGN §7). */
import { Controller, Get, Headers, Param, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrors, ApiOperationId } from './api-docs.decorators.js';
import { ApiExceptionFilter } from './api-exception.filter.js';
import { CallerGuard } from './caller.guard.js';
import { CurrentCaller, type Caller } from './caller.js';
import { OperationEventStreams } from './operation-event-stream.js';
import { OperationReader } from './operation-reader.js';
import { OperationIdPipe } from './path-params.js';

/** `Last-Event-ID` is the `seq` of the last message a client received; anything else starts from the top. */
function afterSeqOf(header: string | undefined): number {
  const seq = header === undefined ? NaN : Number(header);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : 0;
}

@ApiTags('operations')
@ApiBearerAuth()
@UseGuards(CallerGuard)
@UseFilters(ApiExceptionFilter)
@Controller('v1/operations')
export class OperationEventsController {
  constructor(
    private readonly reader: OperationReader,
    private readonly streams: OperationEventStreams,
  ) {}

  @Get(':id/events')
  @ApiOperation({
    summary: 'Live events (Server-Sent Events)',
    description:
      'event "message": a published message (id = its sequence number; send Last-Event-ID to resume after it). ' +
      'event "status": the operation as GET /v1/operations/:id shows it, on every change of status, reason or pending tools. ' +
      'event "delta": { stepIndex, text }, a piece of the answer a model is writing (no id: never replayed; the message that follows holds the whole text). ' +
      'The stream ends after the completed status.',
  })
  @ApiOperationId()
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'Resume after this message sequence number' })
  @ApiProduces('text/event-stream')
  @ApiResponse({ status: 200, description: 'An event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiErrors(401, 404)
  async events(
    @Param('id', OperationIdPipe) id: string,
    @CurrentCaller() caller: Caller,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    await this.reader.owned(id, caller);
    await this.streams.stream(id, response, afterSeqOf(lastEventId));
  }
}
