import { toJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it } from 'vitest';
import * as reservations from '../../src/bus/reservations.js';
import { outputJsonSchema } from '../../src/mcp/json-schema.js';
import { jsonAt, jsonKeysAt } from '../support/json-at.js';

describe('reservation tool schemas', () => {
  it('convert to draft-07 object schemas, inputs closed to extra fields', () => {
    for (const [input, output] of [
      [reservations.ReserveInput, reservations.ReserveOutput],
      [reservations.ReleaseInput, reservations.ReleaseOutput],
      [reservations.ListReservationsInput, reservations.ListReservationsOutput],
    ] as const) {
      expect(toJsonSchema(input)).toMatchObject({ type: 'object', additionalProperties: false, $schema: 'http://json-schema.org/draft-07/schema#' });
      expect(toJsonSchema(output)).toMatchObject({ type: 'object' });
    }
  });

  it('use the architecture\'s field names', () => {
    expect(Object.keys(reservations.ReserveInput.entries)).toEqual(['as', 'paths', 'exclusive', 'ttl_seconds', 'extend_seconds', 'reason', 'take_over', 'repository']);
    expect(Object.keys(reservations.ReleaseInput.entries)).toEqual(['as', 'paths', 'repository']);
    expect(Object.keys(reservations.ListReservationsInput.entries)).toEqual(['as', 'mine', 'paths', 'repository']);
    expect(toJsonSchema(reservations.ReserveInput).required).toEqual(['as', 'paths']);
  });

  it('reserve\'s outputSchema admits the conflict error with its holders, and the plain error envelope', () => {
    const schema = outputJsonSchema(reservations.ReserveOutput, reservations.ReserveErrorDetails);
    expect(schema.type).toBe('object');
    const envelope = jsonAt(schema, 'anyOf', 1);
    expect(jsonAt(envelope, 'required')).toEqual(['error']);
    expect(jsonAt(envelope, 'properties', 'error', 'required')).toEqual(['code', 'message', 'retryable']);
    expect(jsonAt(envelope, 'properties', 'error', 'properties', 'holders', 'type')).toBe('array');
    expect(jsonKeysAt(envelope, 'properties', 'error', 'properties', 'holders', 'items', 'properties')).toEqual([
      'pattern',
      'display_name',
      'exclusive',
      'reason',
      'reserved_at',
      'expires_at',
      'taken_from',
      'taken_at',
      'overlaps',
    ]);
  });
});
