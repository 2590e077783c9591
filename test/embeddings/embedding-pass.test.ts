import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  embeddingBacklog,
  embeddingPassSettled,
  embeddingPassStep,
  runEmbeddingPass,
  triggerEmbeddingPass,
} from '../../src/embeddings/embedding-pass.js';
import { createMaintenance } from '../../src/maintenance/tick.js';
import { startEmbeddingsServer, type EmbeddingsServer } from '../support/embeddings-server.js';
import { busFixture, channel, registerAs, withConfig, type Fixture } from '../support/bus.js';
import { embeddedSeqs, insertMessage } from '../support/rows.js';

let server: EmbeddingsServer;
let fx: Fixture;
let as: string;
const SECRET = 'sk-pass-secret-value-42';

beforeEach(async () => {
  server = await startEmbeddingsServer({ dimensions: 32 });
  process.env.AB_PASS_KEY = SECRET;
  fx = await busFixture({ embedding_endpoint: server.url, embedding_model: 'model-a', embedding_api_key_env: 'AB_PASS_KEY' });
  as = registerAs(fx.ctx, 'Sam');
  channel(fx.ctx, as, 'notes', 'memory');
  channel(fx.ctx, as, 'chat', 'ordinary');
});

afterEach(async () => {
  await fx.close();
  await server.close();
  delete process.env.AB_PASS_KEY;
});

const far = () => fx.clock.monotonic() + 60_000;

function memories(n: number, prefix = 'memory'): number[] {
  return Array.from({ length: n }, (_, i) => insertMessage(fx.ctx, { channel: 'notes', sender: as, content: `${prefix} number ${i}`, memory: true }));
}

describe('embedding pass', () => {
  it('drains a backlog oldest first in batches of 64, bounded by maxBatches', async () => {
    const seqs = memories(150);
    insertMessage(fx.ctx, { channel: 'chat', sender: as, content: 'ordinary messages are never embedded' });

    const first = await runEmbeddingPass(fx.ctx, { maxBatches: 2, deadlineMs: far() });
    expect(first).toMatchObject({ outcome: 'limit', embedded: 128, failedRequests: 0 });
    expect(server.requests.map((r) => r.input.length)).toEqual([64, 64]);
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual(seqs.slice(0, 128));
    expect(embeddingBacklog(fx.ctx.db, 'model-a')).toBe(22);

    const second = await runEmbeddingPass(fx.ctx, { maxBatches: 5, deadlineMs: far() });
    expect(second).toMatchObject({ outcome: 'idle', embedded: 22 });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual(seqs);
    const blob = fx.ctx.db.get<{ vector: Uint8Array }>('SELECT vector FROM embeddings LIMIT 1')?.vector;
    expect(blob?.byteLength).toBe(32 * 4);
  });

  it('drains the backlog as the maintenance tick\'s last step, a fixed number of batches per tick', async () => {
    const seqs = memories(600);
    const { db, config, clock, log, owner } = fx.ctx;
    const maintenance = createMaintenance({ db, config, clock, log, owner, processIdentity: fx.ctx.processIdentity, steps: { embeddingPass: embeddingPassStep(fx.ctx) } });
    const first = await maintenance.runTick();
    expect(first.leased).toBe(true);
    expect(server.requests).toHaveLength(8);
    expect(embeddingBacklog(db, 'model-a')).toBe(600 - 8 * 64);
    fx.clock.advance(3 * 60_000);
    await maintenance.runTick();
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual(seqs);
    await maintenance.stop();
  });

  it('starts no request once the deadline has passed', async () => {
    memories(3);
    const report = await runEmbeddingPass(fx.ctx, { maxBatches: 5, deadlineMs: fx.clock.monotonic() });
    expect(report.outcome).toBe('limit');
    expect(server.requests).toHaveLength(0);
  });

  it('does nothing without an endpoint', async () => {
    memories(2);
    const off = withConfig(fx.ctx, { embedding_endpoint: undefined, embedding_model: undefined });
    expect(await runEmbeddingPass(off, { maxBatches: 5, deadlineMs: far() })).toMatchObject({ outcome: 'off', embedded: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('embeds only live revisions and drops vectors of tombstoned ones', async () => {
    const [a, b] = memories(2);
    await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([a, b]);
    fx.ctx.db.transaction(() => fx.ctx.db.run('UPDATE messages SET tombstone = 1, tombstone_at = ? WHERE seq = ?', [fx.clock.now(), a as number]));
    const report = await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() });
    expect(report).toMatchObject({ outcome: 'idle', removed: 1, embedded: 0 });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([b]);
  });

  it('re-embeds everything when the configured model changes', async () => {
    const seqs = memories(5);
    await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual(seqs);

    const changed = withConfig(fx.ctx, { embedding_model: 'model-b' });
    expect(embeddingBacklog(changed.db, 'model-b')).toBe(5);
    const report = await runEmbeddingPass(changed, { maxBatches: 1, deadlineMs: far() });
    expect(report).toMatchObject({ outcome: 'idle', embedded: 5, removed: 5 });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([]);
    expect(embeddedSeqs(fx.ctx, 'model-b')).toEqual(seqs);
    expect(server.requests.at(-1)?.model).toBe('model-b');
  });

  for (const mode of ['http_500', 'malformed_json', 'short_list', 'nan', 'empty_vector', 'inconsistent_dimensions'] as const) {
    it(`leaves rows un-embedded after ${mode} and embeds them on a later run`, async () => {
      const seqs = memories(3);
      server.mode = mode;
      const failed = await runEmbeddingPass(fx.ctx, { maxBatches: 3, deadlineMs: far() });
      expect(failed).toMatchObject({ outcome: 'stopped', embedded: 0, failedRequests: 1 });
      expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([]);
      const warning = fx.entries.find((e) => e.message.startsWith('embedding request failed'));
      expect(warning?.level).toBe('warn');

      server.mode = 'ok';
      expect(await runEmbeddingPass(fx.ctx, { maxBatches: 3, deadlineMs: far() })).toMatchObject({ outcome: 'idle', embedded: 3 });
      expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual(seqs);
    });
  }

  it('refuses vectors whose dimension differs from those already stored', async () => {
    const [a] = memories(1);
    await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() });
    const [b] = memories(1, 'later');
    server.mode = 'wrong_dimension';
    expect(await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() })).toMatchObject({ outcome: 'stopped', embedded: 0 });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([a]);
    server.mode = 'ok';
    await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([a, b]);
  });

  it('survives an unreachable endpoint', async () => {
    memories(2);
    await server.close();
    const report = await runEmbeddingPass(fx.ctx, { maxBatches: 2, deadlineMs: far() });
    expect(report).toMatchObject({ outcome: 'stopped', failedRequests: 1 });
    expect(embeddingBacklog(fx.ctx.db, 'model-a')).toBe(2);
    server = await startEmbeddingsServer();
  });

  it('sets aside a text the endpoint refuses so the rest of the batch is embedded', async () => {
    const before = memories(5);
    const poison = insertMessage(fx.ctx, { channel: 'notes', sender: as, content: 'TOO-LONG text', memory: true });
    const after = memories(4, 'after');
    server.rejectMarker = 'TOO-LONG';
    const report = await runEmbeddingPass(fx.ctx, { maxBatches: 2, deadlineMs: far() });
    expect(embeddedSeqs(fx.ctx, 'model-a')).toEqual([...before, ...after]);
    expect(report.embedded).toBe(9);
    expect(embeddingBacklog(fx.ctx.db, 'model-a')).toBe(1);

    // Retried once its hold expires and the endpoint accepts it.
    server.rejectMarker = undefined;
    expect((await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() })).embedded).toBe(0);
    fx.clock.advance(2 * 60 * 60 * 1000);
    expect((await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: far() })).embedded).toBe(1);
    expect(embeddedSeqs(fx.ctx, 'model-a')).toContain(poison);
  });

  it('coalesces background triggers into at most one extra run', async () => {
    memories(3);
    triggerEmbeddingPass(fx.ctx);
    triggerEmbeddingPass(fx.ctx);
    triggerEmbeddingPass(fx.ctx);
    await embeddingPassSettled(fx.ctx.db);
    expect(embeddingBacklog(fx.ctx.db, 'model-a')).toBe(0);
    // The first run embedded all three; the coalesced rerun found nothing to send.
    expect(server.requests).toHaveLength(1);
  });

  it('never logs the API key or the texts, even when every request fails', async () => {
    memories(2, 'confidential');
    for (const mode of ['http_500', 'malformed_json', 'hang'] as const) {
      server.mode = mode;
      await runEmbeddingPass(fx.ctx, { maxBatches: 1, deadlineMs: fx.clock.monotonic() + 300 });
    }
    expect(fx.entries.length).toBeGreaterThan(2);
    const logged = JSON.stringify(fx.entries);
    expect(logged).not.toContain(SECRET);
    expect(logged).not.toContain('confidential');
    expect(logged).not.toContain(server.url);
    expect(server.requests.every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(true);
  });
});
