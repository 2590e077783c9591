/**
 * The inspection hook as the bus sees it: no command means allow; otherwise
 * the hook's decision, or BusError inspection_rejected (its reason) or
 * inspection_unavailable (retryable: the hook failed, not the request).
 * Logs carry the operation, sender and a bounded reason, never the payload.
 */
import { BusError } from './bus-error.js';
import type { Logger } from '../log.js';
import { runHook } from '../inspection/hook-runner.js';

/** The longest deny reason passed back to the caller, in bytes. */
export const REASON_CAP_BYTES = 1024;

/** The longest reason written to the log, in bytes. */
const LOG_REASON_BYTES = 200;

export interface InspectionRequest {
  /** The operation kind: `send`, `edit_memory` or `delete_memory`. */
  readonly operation: 'send' | 'edit_memory' | 'delete_memory';
  /** The display name performing it. */
  readonly sender: string;
  /** The validated payload, as the hook will see it on stdin. */
  readonly payload: unknown;
}

export interface InspectionSettings {
  /** argv of the hook; empty means no hook. */
  readonly command: readonly string[];
  /** Deadline for one decision. */
  readonly timeoutSeconds: number;
  /** Where decisions and failures go: operation, sender and a bounded reason, never the payload. */
  readonly log: Logger;
}

/** Cuts `text` to at most `maxBytes` bytes of UTF-8 without splitting a character. */
export function truncateBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const marker = '…';
  let end = Math.min(text.length, maxBytes);
  while (end > 0 && Buffer.byteLength(text.slice(0, end)) + Buffer.byteLength(marker) > maxBytes) end--;
  // Do not leave half of a surrogate pair behind.
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end) + marker;
}

/** Resolves when the operation is allowed; throws BusError inspection_rejected or inspection_unavailable otherwise. */
export async function inspect(settings: InspectionSettings, request: InspectionRequest): Promise<void> {
  if (settings.command.length === 0) return;
  const { operation, sender } = request;
  const input = JSON.stringify({ operation, sender, payload: request.payload });
  const outcome = await runHook(settings.command, settings.timeoutSeconds * 1000, input);
  const hook = settings.command[0] ?? '';

  if (outcome.kind === 'unavailable') {
    settings.log.warn('inspection hook unavailable', { operation, sender, hook, problem: outcome.problem, detail: outcome.detail });
    throw new BusError(
      'inspection_unavailable',
      `the inspection hook ${hook} ${outcome.detail} (${outcome.problem}), so this ${operation} was not performed; retry later, or ask whoever runs the bus to fix the hook`,
    );
  }
  const reason = outcome.decision.reason === undefined ? undefined : truncateBytes(outcome.decision.reason, REASON_CAP_BYTES);
  settings.log.info('inspection decision', {
    operation,
    sender,
    decision: outcome.decision.decision,
    reason: reason === undefined ? undefined : truncateBytes(reason, LOG_REASON_BYTES),
  });
  if (outcome.decision.decision === 'deny') {
    throw new BusError(
      'inspection_rejected',
      reason === undefined || reason === ''
        ? `the inspection hook denied this ${operation} without giving a reason`
        : `the inspection hook denied this ${operation}: ${reason}`,
    );
  }
}
