/**
 * What one MCP tool is: a name, a description, valibot schemas for its input
 * and output (the JSON Schemas in tools/list are generated from them), its
 * annotations, and a handler over the bus.
 */
import type * as v from 'valibot';
import type { BusContext } from '../bus/bus-context.js';

export interface ToolAnnotations {
  /** True when the tool changes nothing. */
  readonly readOnlyHint: boolean;
  /** True when the tool may destroy or overwrite data. */
  readonly destructiveHint: boolean;
  /** True when repeating a call with the same arguments has no further effect. */
  readonly idempotentHint: boolean;
  /** True when the tool reaches outside this machine (agentbus never does, except the embeddings endpoint). */
  readonly openWorldHint: boolean;
}

export interface ToolCallExtra {
  /** Aborts when the client cancels the request. */
  readonly signal: AbortSignal;
  /** Reports progress while a call waits; a no-op when the client sent no progress token. */
  readonly progress: (progress: number, total: number | undefined, message?: string) => void;
}

export interface ToolDefinition {
  /** The stable tool name (architecture.md). */
  readonly name: string;
  /** One or two sentences, starting `Agentbus:`. */
  readonly description: string;
  /** The operation's input schema; its JSON Schema is the tool's inputSchema. */
  readonly input: v.GenericSchema;
  /** The operation's success schema; with the error envelope it is the outputSchema. */
  readonly output: v.GenericSchema;
  /** Extra fields some of the tool's errors carry beside code, message and retryable (an object schema of optional entries). */
  readonly errorDetails?: v.GenericSchema;
  readonly annotations: ToolAnnotations;
  /**
   * Performs the call. Arguments arrive unvalidated: the bus operation
   * validates them itself (one validation path, the same in-process and over
   * MCP) and throws BusError on failure.
   */
  handler(ctx: BusContext, args: unknown, extra: ToolCallExtra): object | Promise<object>;
}
