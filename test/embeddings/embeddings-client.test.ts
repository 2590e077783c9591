import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddingsClient, type EmbeddingsClient } from '../../src/embeddings/embeddings-client.js';
import { EmbeddingError, type EmbeddingErrorKind } from '../../src/embeddings/embedding-error.js';
import { deterministicVector, startEmbeddingsServer, type EmbeddingsServer, type ServerMode } from '../support/embeddings-server.js';
import { expectError } from '../support/expect-error.js';

let server: EmbeddingsServer;
let client: EmbeddingsClient;
const SECRET = 'sk-client-test-secret';

beforeEach(async () => {
  server = await startEmbeddingsServer({ dimensions: 16 });
  client = createEmbeddingsClient(
    { embedding_endpoint: server.url, embedding_model: 'm1', embedding_api_key_env: 'AB_TEST_KEY' },
    { env: { AB_TEST_KEY: SECRET }, maxResponseBytes: 1024 * 1024 },
  );
});

afterEach(async () => {
  await server.close();
});

async function failure(texts: string[], timeoutMs = 5_000, expectedDimensions?: number): Promise<EmbeddingError> {
  return expectError(() => client.embed(texts, { timeoutMs, expectedDimensions }), EmbeddingError);
}

describe('embeddings client', () => {
  it('sends the model, the texts and the bearer key, and maps vectors back by index', async () => {
    const vectors = await client.embed(['alpha beta', 'gamma'], { timeoutMs: 5_000 });
    expect(server.requests).toEqual([{ model: 'm1', input: ['alpha beta', 'gamma'], authorization: `Bearer ${SECRET}` }]);
    expect(vectors).toHaveLength(2);
    const raw = deterministicVector('gamma', 'm1', 16);
    const norm = Math.hypot(...raw);
    expect(vectors[1]?.[0]).toBeCloseTo((raw[0] as number) / norm, 5);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
  });

  it('sends no authorization header when no key is configured', async () => {
    const keyless = createEmbeddingsClient({ embedding_endpoint: server.url, embedding_model: 'm1' }, { env: {} });
    await keyless.embed(['x'], { timeoutMs: 5_000 });
    expect(server.requests[0]?.authorization).toBeUndefined();
  });

  const broken: [ServerMode, EmbeddingErrorKind][] = [
    ['http_500', 'http'],
    ['malformed_json', 'invalid_response'],
    ['wrong_shape', 'invalid_response'],
    ['inconsistent_dimensions', 'invalid_response'],
    ['short_list', 'invalid_response'],
    ['nan', 'invalid_response'],
    ['empty_vector', 'invalid_response'],
    ['huge_body', 'too_large'],
  ];
  for (const [mode, kind] of broken) {
    it(`turns ${mode} into an EmbeddingError of kind ${kind} without echoing the texts or the key`, async () => {
      server.mode = mode;
      const error = await failure(['private text one', 'private text two']);
      expect(error.kind).toBe(kind);
      expect(error.message).not.toContain('private text');
      expect(error.message).not.toContain(SECRET);
    });
  }

  it('refuses vectors whose dimension differs from the stored one', async () => {
    const error = await failure(['a'], 5_000, 17);
    expect(error.kind).toBe('invalid_response');
    server.mode = 'wrong_dimension';
    expect((await failure(['a'], 5_000, 16)).kind).toBe('invalid_response');
  });

  it('gives up on a hanging endpoint at the timeout', async () => {
    server.mode = 'hang';
    expect((await failure(['a'], 200)).kind).toBe('timeout');
  });

  it('reports a closed port as unreachable', async () => {
    await server.close();
    expect((await failure(['a'])).kind).toBe('unreachable');
    server = await startEmbeddingsServer();
  });

  it('reports a bad key file as kind key before any request', async () => {
    const bad = createEmbeddingsClient({ embedding_endpoint: server.url, embedding_model: 'm1', embedding_api_key_file: '/nonexistent/key' }, { env: {} });
    const error = await expectError(() => bad.embed(['a'], { timeoutMs: 1_000 }), EmbeddingError);
    expect(error.kind).toBe('key');
    expect(server.requests).toHaveLength(0);
  });
});
