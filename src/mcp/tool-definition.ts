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

// Schemas are stored type-erased: each tool's handler is checked against its own schemas where it is defined.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySchema = v.GenericSchema<any, any>;

export interface ToolDefinition<TInput = unknown, TOutput = unknown> {
  /** The stable tool name (architecture.md). */
  readonly name: string;
  /** One or two sentences, starting `Agentbus:`. */
  readonly description: string;
  /** Validates arguments; its JSON Schema is the tool's inputSchema. */
  readonly input: v.GenericSchema<unknown, TInput> | AnySchema;
  /** Describes the success result; its JSON Schema (with the error envelope) is the outputSchema. */
  readonly output: v.GenericSchema<TOutput> | AnySchema;
  readonly annotations: ToolAnnotations;
  /** Performs the call with validated input; throws BusError on failure. */
  handler(ctx: BusContext, input: TInput, extra: ToolCallExtra): TOutput | Promise<TOutput>;
}

/** Defines a tool with its handler typed by its schemas. */
export function defineTool<I extends AnySchema, O extends AnySchema>(tool: {
  readonly name: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  readonly annotations: ToolAnnotations;
  handler(ctx: BusContext, input: v.InferOutput<I>, extra: ToolCallExtra): v.InferInput<O> | Promise<v.InferInput<O>>;
}): ToolDefinition<v.InferOutput<I>, v.InferInput<O>> {
  return tool;
}
