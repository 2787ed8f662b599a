import { Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ON_HOOK_METADATA, type OnHookMetadata } from './on-hook.decorator.js';

/** Reads `@OnHook` metadata; always an array (or nothing). */
@Injectable()
export class HookMetadataAccessor {
  constructor(private readonly reflector: Reflector) {}

  getHookMetadata(target: unknown): OnHookMetadata[] | undefined {
    if (!target || (typeof target !== 'function' && typeof target !== 'object')) return undefined;
    const metadata = this.reflector.get<OnHookMetadata[] | OnHookMetadata | undefined>(ON_HOOK_METADATA, target as object as never);
    if (!metadata) return undefined;
    return Array.isArray(metadata) ? metadata : [metadata];
  }
}
