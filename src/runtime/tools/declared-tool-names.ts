/**
 * The `identifier/apiName` of every `@Tool` on some classes, read from metadata without Nest: what
 * `agentctl validate` knows of an app's local tools (the standalone server's built-ins) without booting it.
 */
import type { Type } from '@nestjs/common';
import { readToolMetadata } from './tool.decorator.js';

export function declaredToolNames(classes: readonly Type<unknown>[]): string[] {
  const names: string[] = [];
  for (const type of classes) {
    // Up the prototype chain, as the explorer's MetadataScanner does: inherited `@Tool` methods count too.
    for (let proto: object | null = type.prototype as object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
      for (const key of Object.getOwnPropertyNames(proto)) {
        if (key === 'constructor') continue;
        const method = Object.getOwnPropertyDescriptor(proto, key)?.value as unknown;
        for (const options of readToolMetadata(method) ?? []) names.push(`${options.identifier}/${options.apiName}`);
      }
    }
  }
  return names;
}
