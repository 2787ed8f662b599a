/** The `Idempotency-Key` header of `POST /v1/operations`: optional; keys are per owner and stored in 255 characters. */
import { invalidRequest } from './api-error.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
const KEY = /^[\x20-\x7e]{1,255}$/;

export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const key = Array.isArray(value) ? undefined : value.trim();
  if (key === undefined || !KEY.test(key)) throw invalidRequest(`${IDEMPOTENCY_KEY_HEADER}: must be 1 to 255 printable ASCII characters`);
  return key;
}
