/**
 * Who claims or holds something in the database from this process (owed notifications, terminal sequences,
 * deferred results): unique per claim, prefixed with the process's instance id (`LeaseHolder.instanceId`).
 */
import { randomUUID } from 'node:crypto';

export type ClaimKind = 'owed' | 'terminal' | 'deferred';

export function claimantId(instanceId: string, kind?: ClaimKind): string {
  return kind !== undefined ? `${instanceId}:${kind}:${randomUUID()}` : `${instanceId}:${randomUUID()}`;
}
