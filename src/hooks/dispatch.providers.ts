/** The dispatcher and its parts, provided together wherever the dispatcher is (the module, test harnesses). */
import type { Provider } from '@nestjs/common';
import { CallGate } from './call-gate.js';
import { HookDispatcher } from './hook-dispatcher.js';
import { HookInvoker } from './hook-invoker.js';
import { OutcomeRecorder } from './outcome-recorder.js';

export const DISPATCH_PROVIDERS: Provider[] = [OutcomeRecorder, HookInvoker, CallGate, HookDispatcher];
