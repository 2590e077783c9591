/**
 * The reserved channel direct messages are stored in (sql/0012): part of the
 * schema, so the layers that seed and empty the schema (maintenance's reset)
 * and the operations (src/bus/) read it from here. No caller can name it:
 * channel names start with a letter or digit.
 */
export const DIRECT_CHANNEL = '@direct';
