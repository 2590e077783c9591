/**
 * Shaping tool results: the same JSON as structuredContent and as a text
 * block; errors as `isError` results carrying `{error: {code, message, retryable}}`.
 */
import { BusError } from '../bus/bus-error.js';
import { DbError } from '../db/db-error.js';

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

export function successResult(value: Record<string, unknown>): ToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

export function errorResult(error: BusError): ToolResult {
  const structured = { error: error.toJSON() };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError: true };
}

/** Maps anything thrown by a handler to a BusError; unexpected failures become `internal`. */
export function toBusError(error: unknown): { error: BusError; unexpected: boolean } {
  if (error instanceof BusError) return { error, unexpected: false };
  if (error instanceof DbError && (error.code === 'busy' || error.code === 'locked')) {
    return { error: new BusError('internal', 'the database is busy with other agents; retry in a moment', { retryable: true }), unexpected: false };
  }
  if (error instanceof DbError && error.code === 'full') {
    return { error: new BusError('internal', 'the disk holding the agentbus database is full; free space and retry', { retryable: true }), unexpected: true };
  }
  return { error: new BusError('internal', 'agentbus failed unexpectedly; the details are in the agentbus log', { retryable: true }), unexpected: true };
}
