/**
 * The inspection hook (placeholder until the maintenance issue lands): with
 * no command configured every operation is allowed, which is the design's
 * "no hook means allow".
 */
import type { Logger } from '../log.js';

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
  readonly log: Logger;
}

/** Resolves when the operation is allowed; throws BusError inspection_rejected or inspection_unavailable otherwise. */
export async function inspect(settings: InspectionSettings, _request: InspectionRequest): Promise<void> {
  if (settings.command.length === 0) return;
  throw new Error('inspection hook runner not implemented yet');
}
