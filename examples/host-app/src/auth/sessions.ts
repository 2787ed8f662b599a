/**
 * Browser sessions: a random id in an HttpOnly, SameSite=Strict cookie, mapped here to the user who signed
 * in. SameSite=Strict keeps the cookie off requests other sites start, so a cookie-authenticated POST
 * (an approval in the console) cannot be forged from elsewhere. In memory: one process, gone on restart.
 */
import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { HostUser } from './users.js';

export const SESSION_COOKIE = 'host_session';
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;

@Injectable()
export class SessionStore {
  private readonly sessions = new Map<string, { user: HostUser; expiresAt: number }>();

  open(user: HostUser): { id: string; maxAgeSeconds: number } {
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, { user, expiresAt: Date.now() + SESSION_TTL_MS });
    return { id, maxAgeSeconds: SESSION_TTL_MS / 1000 };
  }

  user(id: string | undefined): HostUser | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (session && session.expiresAt > Date.now()) return session.user;
    this.sessions.delete(id);
    return undefined;
  }

  close(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }
}

/** One cookie's value from a `Cookie` header (no parser dependency for one cookie). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
