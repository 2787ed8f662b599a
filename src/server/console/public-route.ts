/**
 * The console's page and assets are static files that hold no data: every read and decision the page
 * makes is an API call the host's own guard checks. A browser sends no `Authorization` header for a page
 * it navigates to or a `<script src>` it loads, so a bearer-only host guard must let these routes through.
 * They carry this metadata for it:
 *
 *   if (this.reflector.getAllAndOverride(AGENT_HOOKS_PUBLIC, [context.getHandler(), context.getClass()])) return true;
 */
export const AGENT_HOOKS_PUBLIC = 'nest-agent-hooks:public';
