/**
 * How values come back from PostgreSQL, matching the contract's rules for
 * SQLite (driver.ts, SqlValue): integers as numbers, and one beyond
 * ±(2^53-1) refused (OutOfRange, turned into `integer_range`) rather than
 * rounded; booleans as 1/0 (SQLite has none); bytea as a Uint8Array; every
 * other type (text, json, timestamps) as PostgreSQL's text, unparsed.
 */
import pg from 'pg';

/** An integer a JS number cannot hold exactly, kept as its text until the row is checked. */
export class OutOfRange {
  constructor(readonly text: string) {}
}

const BOOL = 16;
const BYTEA = 17;
const INT8 = 20;
const INT2 = 21;
const INT4 = 23;
const OID = 26;
const FLOAT4 = 700;
const FLOAT8 = 701;
const NUMERIC = 1700;

/** An int8 or numeric: a number when exact, OutOfRange for a too-large integer, a float for a fraction. */
function parseExact(text: string): number | OutOfRange {
  const n = Number(text);
  if (/^-?[0-9]+$/.test(text) && !Number.isSafeInteger(n)) return new OutOfRange(text);
  return n;
}

const identity = (text: string): string => text;

/** The `types` option of every pg client the bridge makes. */
export const pgTypeParsers = {
  getTypeParser(oid: number, format?: string): (text: string) => unknown {
    switch (oid) {
      case INT2:
      case INT4:
      case OID:
        return Number;
      case INT8:
      case NUMERIC:
        return parseExact;
      case FLOAT4:
      case FLOAT8:
        return Number;
      case BOOL:
        return (text) => (text === 't' ? 1 : 0);
      case BYTEA:
        return pg.types.getTypeParser(BYTEA, format);
      default:
        return identity;
    }
  },
};
