/**
 * Shaping tool results: the same JSON as structuredContent and as a text
 * block; errors as `isError` results carrying `{error: {code, message, retryable}}`.
 */
import * as v from 'valibot';
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

function fieldOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String(p.key)).join('.');
}

/** Turns valibot's first issue into a validation error naming the field and the fix. */
export function validationError(issues: readonly v.BaseIssue<unknown>[], allowedFields: readonly string[]): BusError {
  const issue = issues[0];
  if (issue === undefined) return new BusError('validation', 'invalid arguments');
  const field = fieldOf(issue);
  let message: string;
  if (issue.expected === 'never') {
    message = `unknown field "${field}"; remove it (fields: ${allowedFields.join(', ')})`;
  } else if (issue.received === 'undefined') {
    message = `${field} is required`;
  } else {
    message = `${field === '' ? 'arguments' : field}: ${issue.message}`;
  }
  return new BusError('validation', message, { field });
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
