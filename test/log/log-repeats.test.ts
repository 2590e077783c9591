import { describe, expect, it } from 'vitest';
import { createMemoryLogger } from '../../src/log.js';
import { limitRepeats } from '../../src/log-repeats.js';

describe('repeated log lines', () => {
  it('writes an identical warning or error once per window, then once more with the count left out', () => {
    let now = 0;
    const sink = createMemoryLogger();
    const log = limitRepeats(sink, { windowMs: 60_000, now: () => now });
    for (let i = 0; i < 1_000; i++) log.error('tool failed', { tool: 'send', error: 'DbError: database disk image is malformed' });
    expect(sink.entries).toHaveLength(1);
    now = 59_999;
    log.error('tool failed', { tool: 'send', error: 'DbError: database disk image is malformed' });
    expect(sink.entries).toHaveLength(1);
    now = 60_000;
    log.error('tool failed', { tool: 'send', error: 'DbError: database disk image is malformed' });
    expect(sink.entries).toHaveLength(2);
    expect(sink.entries[1]?.fields).toEqual({ tool: 'send', error: 'DbError: database disk image is malformed', repeated: 1000 });
  });

  it('keeps lines that differ in level, message or fields apart, and passes info and debug through', () => {
    const sink = createMemoryLogger();
    const log = limitRepeats(sink, { now: () => 0 });
    log.error('tool failed', { tool: 'send' });
    log.error('tool failed', { tool: 'history' });
    log.warn('tool failed', { tool: 'send' });
    log.warn('heartbeat failed', { error: 'busy' });
    log.info('maintenance tick', { rows: 1 });
    log.info('maintenance tick', { rows: 1 });
    log.debug('detail');
    log.debug('detail');
    expect(sink.entries.map((e) => `${e.level} ${e.message}`)).toEqual([
      'error tool failed',
      'error tool failed',
      'warn tool failed',
      'warn heartbeat failed',
      'info maintenance tick',
      'info maintenance tick',
      'debug detail',
      'debug detail',
    ]);
  });

  it('forgets the oldest line past its memory limit, so distinct lines cannot grow it without bound', () => {
    const sink = createMemoryLogger();
    const log = limitRepeats(sink, { now: () => 0, maxKeys: 3 });
    for (const n of [1, 2, 3, 4]) log.warn('w', { n });
    // 1 was forgotten to make room for 4, so it is written again; 4 is still remembered.
    log.warn('w', { n: 1 });
    log.warn('w', { n: 4 });
    expect(sink.entries.map((e) => e.fields.n)).toEqual([1, 2, 3, 4, 1]);
  });
});
