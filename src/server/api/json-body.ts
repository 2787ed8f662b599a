/**
 * JSON in (DESIGN §7): one JSON parser with a size limit. A larger body is refused while it streams in
 * (413), malformed JSON is a 400; both reach the exception filter as HTTP errors.
 */
import type { NestExpressApplication } from '@nestjs/platform-express';

/** Generous for prompts and hook lists; small enough that a caller cannot make the server buffer much. */
export const JSON_BODY_LIMIT_BYTES = 1024 * 1024;

/** Call before `listen` on an app created with `bodyParser: false`. */
export function useJsonBody(app: NestExpressApplication): void {
  // `strict`: only objects and arrays at the top level, so a bare `"text"` is malformed (400), not a string body.
  app.useBodyParser('json', { limit: JSON_BODY_LIMIT_BYTES, strict: true });
}
