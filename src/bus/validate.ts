/**
 * Turning tool arguments into typed input: valibot parses, and every problem
 * becomes one BusError `validation` naming the field and the fix, before
 * anything is read or written.
 */
import * as v from 'valibot';
import { BusError } from './bus-error.js';

function fieldOf(issue: v.BaseIssue<unknown>): string {
  return (issue.path ?? []).map((p) => String(p.key)).join('.');
}

// What to put in a missing required field, so the model can fix its next call.
const REQUIRED_HINTS: Readonly<Record<string, string>> = {
  as: 'is required: pass the display name register returned',
  channel: 'is required: a channel name (see list_channels)',
  content: 'is required: the message text',
};

function problemOf(issue: v.BaseIssue<unknown>): string {
  const field = fieldOf(issue);
  if (issue.kind === 'schema' && issue.expected === 'never') return 'is not a field of this operation; remove it';
  if (issue.kind === 'schema' && issue.received === 'undefined' && field !== '') return REQUIRED_HINTS[field] ?? 'is required';
  // Messages written into a schema (regex rules, picklists) are already sentences.
  if (!/^Invalid \w+: Expected /.test(issue.message)) return issue.message;
  switch (issue.type) {
    case 'max_length':
      return `must be at most ${issue.expected?.replace('<=', '')} characters (got ${issue.received})`;
    case 'min_length':
      return `must be at least ${issue.expected?.replace('>=', '')} characters long`;
    case 'max_value':
      return `must be at most ${issue.expected?.replace('<=', '')} (got ${issue.received})`;
    case 'min_value':
      return `must be at least ${issue.expected?.replace('>=', '')} (got ${issue.received})`;
    case 'max_entries':
      return `must have at most ${issue.expected?.replace('<=', '')} entries (got ${issue.received})`;
    case 'integer':
      return `must be a whole number (got ${issue.received})`;
    case 'picklist':
      return `must be one of ${issue.expected} (got ${issue.received})`;
    default:
      return `must be ${issue.expected} (got ${issue.received})`;
  }
}

/**
 * Parses `input` with `schema`; throws BusError `validation` whose `field`
 * is the first bad field and whose message lists every problem found.
 */
export function parseInput<const S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  const first = fieldOf(result.issues[0]);
  if (first === '') {
    throw new BusError('validation', `arguments: must be an object of named fields (got ${result.issues[0].received})`, { field: 'arguments' });
  }
  const problems = result.issues.slice(0, 5).map((issue) => `${fieldOf(issue)}: ${problemOf(issue)}`);
  return throwValidation(first, problems.join('; '));
}

function throwValidation(field: string, message: string): never {
  throw new BusError('validation', message, { field });
}

/** A `validation` error for a check valibot cannot express (byte lengths, cross-field rules). */
export function invalid(field: string, problem: string): BusError {
  return new BusError('validation', `${field}: ${problem}`, { field });
}
