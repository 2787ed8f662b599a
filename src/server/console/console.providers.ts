/** The console for `ServerModule`: its controller and its file list (read once, at start). */
import type { Provider, Type } from '@nestjs/common';
import { ConsoleController, CONSOLE_FILES } from './console.controller.js';
import { listConsoleFiles } from './console-files.js';

export const CONSOLE_CONTROLLERS: Type[] = [ConsoleController];

export const consoleProviders: Provider[] = [{ provide: CONSOLE_FILES, useFactory: () => listConsoleFiles() }];
