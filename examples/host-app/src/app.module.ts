/**
 * The host service: its login and guard, its PostgreSQL DataSource, its agent tool and policy, its own
 * routes, and nest-agent-hooks mounted under /agents (the HTTP API and the console) behind that guard.
 */
import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AgentHooksHttpModule, AgentHooksModule } from 'nest-agent-hooks';
import { fileURLToPath } from 'node:url';
import { AuthController } from './auth/auth.controller.js';
import { HostAuthGuard, type SignedInRequest } from './auth/host-auth.guard.js';
import { SessionStore } from './auth/sessions.js';
import { agentOwner, UserDirectory } from './auth/users.js';
import { DatabaseModule } from './database/database.module.js';
import { RefundPolicy } from './support/refund-policy.hooks.js';
import { RefundTool } from './support/refund.tool.js';
import { SupportController } from './support/support.controller.js';

@Module({
  imports: [
    DatabaseModule,
    // `isGlobal` lets the mounted routes (a sibling module) use this runtime.
    AgentHooksModule.forRoot({ isGlobal: true, database: 'host', configFile: fileURLToPath(new URL('../config/agents.yaml', import.meta.url)) }),
    // G9: each request is answered for the owner this returns; none (a user without the agents role) is a 401.
    AgentHooksHttpModule.register({ path: 'agents', owner: (request) => agentOwner((request as SignedInRequest).user) }),
  ],
  controllers: [AuthController, SupportController],
  providers: [UserDirectory, SessionStore, RefundTool, RefundPolicy, { provide: APP_GUARD, useClass: HostAuthGuard }],
})
export class AppModule {}
