/**
 * JSON Schemas for tools/list, generated from the valibot schemas that
 * validate, as draft-07 (the MCP client's Ajv ignores 2020-12 keywords).
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';

type JsonObject = Record<string, unknown>;

function convert(schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonObject {
  // Checks that JSON Schema cannot express (byte lengths, cross-field rules) are
  // left out here and still enforced by valibot and the operations.
  const json = toJsonSchema(schema, { target: 'draft-07', typeMode, errorMode: 'ignore' }) as JsonObject;
  delete json.$schema;
  return json;
}

/** The inputSchema of a tool: an object schema of its arguments. */
export function inputJsonSchema(schema: v.GenericSchema): JsonObject {
  const json = convert(schema, 'input');
  if (json.type !== 'object') throw new Error('a tool input schema must be an object schema');
  return json;
}

const ERROR_ENVELOPE: JsonObject = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        retryable: { type: 'boolean' },
      },
      required: ['code', 'message', 'retryable'],
    },
  },
  required: ['error'],
};

/**
 * The outputSchema of a tool. The MCP client validates structuredContent
 * against it even on error results, and rejects a root other than
 * `type: object`; so the root is an object that is either the success shape
 * or the error envelope.
 */
export function outputJsonSchema(schema: v.GenericSchema, errorDetails?: v.GenericSchema): JsonObject {
  const success = convert(schema, 'output');
  return { type: 'object', anyOf: [success, errorDetails === undefined ? ERROR_ENVELOPE : errorEnvelope(errorDetails)] };
}

/** The error envelope with a tool's extra error fields (optional: only some codes carry them). */
function errorEnvelope(details: v.GenericSchema): JsonObject {
  const extra = convert(details, 'output');
  if (extra.type !== 'object') throw new Error('a tool error details schema must be an object schema');
  const error = (ERROR_ENVELOPE.properties as JsonObject).error as JsonObject;
  return {
    ...ERROR_ENVELOPE,
    properties: { error: { ...error, properties: { ...(extra.properties as JsonObject), ...(error.properties as JsonObject) } } },
  };
}
