/**
 * The reservation tools' answers over MCP, checked against the tools' own
 * output schemas (src/bus/reservations.ts) and typed: `granted` is a reserve
 * that succeeded, `refused` a call answered with the error envelope. A call
 * answered the other way fails the test with the answer in the message.
 */
import * as v from 'valibot';
import { ListReservationsOutput, ReleaseOutput, ReserveErrorDetails, ReserveOutput } from '../../src/bus/reservations.js';
import type { McpProcess } from '../support/mcp-process.js';
import { ToolError, toolAnswer } from '../support/tool-answer.js';

/** The error envelope, with reserve's extra `holders`. */
export const Refusal = v.object({ error: v.object({ ...ToolError.entries.error.entries, ...ReserveErrorDetails.entries }) });

export type ReserveResult = v.InferInput<typeof ReserveOutput>;
export type Refusal = v.InferInput<typeof Refusal>;
export type ReserveAnswer = ReserveResult | Refusal;

/** Calls reserve; the answer must be a success. */
export async function granted(p: McpProcess, args: Record<string, unknown>): Promise<ReserveResult> {
  return toolAnswer(ReserveOutput, await p.call('reserve', args), 'reserve');
}

/** Calls `tool`; the answer must be the error envelope. */
export async function refused(p: McpProcess, args: Record<string, unknown>, tool = 'reserve'): Promise<Refusal> {
  return toolAnswer(Refusal, await p.call(tool, args), tool);
}

/** Calls reserve; the answer may be either (racing callers). */
export async function reserveAnswer(p: McpProcess, args: Record<string, unknown>): Promise<ReserveAnswer> {
  return toolAnswer(v.union([Refusal, ReserveOutput]), await p.call('reserve', args), 'reserve');
}

export async function released(p: McpProcess, args: Record<string, unknown>): Promise<v.InferInput<typeof ReleaseOutput>> {
  return toolAnswer(ReleaseOutput, await p.call('release', args), 'release');
}

export async function listed(p: McpProcess, args: Record<string, unknown>): Promise<v.InferInput<typeof ListReservationsOutput>> {
  return toolAnswer(ListReservationsOutput, await p.call('list_reservations', args), 'list_reservations');
}
