/** The reading services (DESIGN §12): the one mapping of the HTTP API's shapes and the loops that follow operations. */
import type { Provider } from '@nestjs/common';
import { OperationChanges } from './operation-changes.js';
import { OperationFollower } from './operation-follower.js';
import { OperationReadService } from './operation-read.service.js';
import { SharedSummaryReads } from './shared-summary-reads.js';

export const READING_PROVIDERS: Provider[] = [OperationReadService, SharedSummaryReads, OperationFollower, OperationChanges];
