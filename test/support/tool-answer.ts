/**
 * A tool's answer (structuredContent) checked against a schema, typed by it:
 * the tools' own output schemas from src/bus, so a test reads typed fields
 * instead of casting. An answer of another shape fails the test, naming the
 * tool, the answer and what did not match.
 */
import * as v from 'valibot';

// The answer itself is returned, not valibot's copy of it: a field the schema
// does not name still shows in the test's comparisons.
export function toolAnswer<S extends v.GenericSchema>(schema: S, answer: unknown, tool: string): v.InferInput<S> {
  if (v.is(schema, answer)) return answer;
  const result = v.safeParse(schema, answer);
  throw new Error(`${tool} answered ${JSON.stringify(answer)}${result.success ? '' : `: ${v.summarize(result.issues)}`}`);
}

/** The error envelope every tool answers with when it fails (a tool may add fields to `error`). */
export const ToolError = v.object({
  error: v.object({ code: v.string(), message: v.string(), retryable: v.boolean() }),
});
export type ToolError = v.InferInput<typeof ToolError>;
