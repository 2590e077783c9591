/**
 * Refusals only a person can resolve (an older agentbus's lock whose owner
 * cannot be judged, a data directory on a network file system) reach a tool
 * caller as not retryable, with the storage layer's advice in the message.
 */
import { describe, expect, it } from 'vitest';
import { DbError } from '../../src/db/contract/db-error.js';
import { toBusError } from '../../src/mcp/tool-result.js';

describe('tool errors for storage refusals', () => {
  it('answers lock_owner_unknown as not retryable, naming what to do', () => {
    const refusal = new DbError('lock_owner_unknown', '/d/agentbus.db-locks holds a lock of pid 7 written by an older agentbus: stop every older agentbus process, then delete /d/agentbus.db-locks');
    const { error, unexpected } = toBusError(refusal, '/d');
    expect(error.toJSON()).toMatchObject({ code: 'internal', retryable: false });
    expect(error.message).toContain(refusal.message);
    expect(error.message).toMatch(/Retrying cannot help/);
    expect(unexpected).toBe(true);
  });

  it('answers unsupported_filesystem as not retryable, naming what to do', () => {
    const refusal = new DbError('unsupported_filesystem', 'the data directory /d is on a network file system (nfs): set AGENTBUS_DATA_DIR to a directory on a local disk');
    const { error } = toBusError(refusal);
    expect(error.toJSON()).toMatchObject({ code: 'internal', retryable: false });
    expect(error.message).toContain(refusal.message);
    expect(error.message).toMatch(/move the data directory/);
  });
});
