/**
 * The host's users and their bearer tokens. A real service has an identity provider; this one reads
 * `HOST_USERS` (`id:token:roles`, comma-separated; roles joined by `+`), with a demo set by default.
 * Only users with the `agents` role own operations: anyone else is signed in to the host but gets a 401
 * from the mounted agent routes (the owner resolver returns no owner for them).
 */
import { Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';

export interface HostUser {
  readonly id: string;
  readonly roles: readonly string[];
}

const DEMO_USERS = 'alice:alice-token:agents,bob:bob-token:agents,viewer:viewer-token:reports';

@Injectable()
export class UserDirectory {
  private readonly byToken: ReadonlyArray<{ token: Buffer; user: HostUser }>;

  constructor() {
    this.byToken = (process.env.HOST_USERS ?? DEMO_USERS).split(',').map((entry) => {
      const [id, token, roles = ''] = entry.trim().split(':');
      if (!id || !token) throw new Error('HOST_USERS: each entry is id:token[:role+role]');
      return { token: Buffer.from(token), user: { id, roles: roles.split('+').filter(Boolean) } };
    });
  }

  /** The user a token belongs to; compared in constant time, so a guess learns nothing from the timing. */
  byBearerToken(token: string): HostUser | undefined {
    const given = Buffer.from(token);
    return this.byToken.find((entry) => entry.token.length === given.length && timingSafeEqual(entry.token, given))?.user;
  }
}

/** The owner of a request for the agent routes: the signed-in user when they may use agents. */
export function agentOwner(user: HostUser | undefined): string | undefined {
  return user?.roles.includes('agents') ? user.id : undefined;
}
