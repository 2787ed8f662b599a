/**
 * Outcomes and statuses as the page shows them: a colour class AND a word and a symbol, so colour is
 * never the only sign (issue 17 item 5).
 */
import type { HookOutcome, OperationStatus, TerminalReason } from './api/types.js';

export interface Sign {
  label: string;
  symbol: string;
  tone: 'ok' | 'allowed' | 'denied' | 'mocked' | 'notification' | 'error' | 'running' | 'waiting' | 'done' | 'muted';
}

const OUTCOMES: Record<HookOutcome, Sign> = {
  ok: { label: 'ok', symbol: '✓', tone: 'ok' },
  allowed: { label: 'allowed', symbol: '✔', tone: 'allowed' },
  denied: { label: 'denied', symbol: '⊘', tone: 'denied' },
  mocked: { label: 'mocked', symbol: '◇', tone: 'mocked' },
  notification: { label: 'notification', symbol: '✉', tone: 'notification' },
  error: { label: 'error', symbol: '⚠', tone: 'error' },
};

export function outcomeSign(outcome: HookOutcome): Sign {
  return OUTCOMES[outcome] ?? { label: outcome, symbol: '•', tone: 'muted' };
}

export function statusSign(status: OperationStatus, reason?: TerminalReason): Sign {
  if (status === 'running') return { label: 'running', symbol: '▶', tone: 'running' };
  if (status === 'waiting') return { label: 'waiting', symbol: '‖', tone: 'waiting' };
  if (reason === 'done' || reason === undefined) return { label: reason ? 'completed · done' : 'completed', symbol: '■', tone: 'done' };
  if (reason === 'interrupted') return { label: 'completed · interrupted', symbol: '✕', tone: 'muted' };
  return { label: `completed · ${reason.replace('_', ' ')}`, symbol: '⚠', tone: 'error' };
}
