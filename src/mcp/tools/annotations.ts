/** The annotation sets the tools share, so each tool states its nature by name. */
import type { ToolAnnotations } from '../tool-definition.js';

/** Reads only. */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Writes, and repeating the same call changes nothing more. */
export const IDEMPOTENT_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Writes something new each time (unless given an idempotency_key). */
export const ADDITIVE_WRITE: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
