/**
 * A client for OpenAI-compatible embeddings endpoints (OpenAI, Ollama,
 * LM Studio, Voyage, Gemini's compatibility layer): `POST {endpoint}` with
 * `{model, input: string[]}`, answered by `{data: [{embedding, index}]}`.
 *
 * The endpoint is outside our control, so every answer is checked before a
 * vector is believed: status, size, JSON, shape, count, indexes, finiteness
 * and dimensions. Any failure is an EmbeddingError whose message describes
 * the endpoint's behaviour without echoing request or response bodies.
 */
import { resolveApiKey, type ApiKeySettings } from './api-key.js';
import { EmbeddingError } from './embedding-error.js';
import { normalizeVector } from './vector-codec.js';

/** Texts per request in the embedding pass. */
export const EMBEDDING_BATCH_SIZE = 64;
/** Deadline of one batch request. */
export const BATCH_TIMEOUT_MS = 30_000;
/** Deadline of embedding a search query. */
export const QUERY_TIMEOUT_MS = 10_000;
/** The most response bytes read; 64 texts at 4096 dimensions as JSON fit well inside. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface EmbeddingsClientSettings extends ApiKeySettings {
  /** The full URL requests are POSTed to. */
  readonly embedding_endpoint: string;
  /** The model name sent with every request; stored with each vector. */
  readonly embedding_model: string;
}

export interface EmbedOptions {
  /** Abort the request (connect, send, read) after this many milliseconds. */
  readonly timeoutMs: number;
  /** When known, every vector must have exactly this many dimensions. */
  readonly expectedDimensions?: number | undefined;
}

export interface EmbeddingsClient {
  /** The model every vector from this client belongs to. */
  readonly model: string;
  /** One normalized vector per text, in input order. Throws EmbeddingError. */
  embed(texts: readonly string[], options: EmbedOptions): Promise<Float32Array[]>;
}

export interface EmbeddingsClientOptions {
  /** Where the key comes from; read per request. */
  readonly env?: NodeJS.ProcessEnv;
  /** The response size cap; tests lower it. */
  readonly maxResponseBytes?: number;
}

/** The embeddings settings of a configuration, or undefined when semantic search is off. */
export function embeddingSettings(config: {
  readonly embedding_endpoint?: string | undefined;
  readonly embedding_model?: string | undefined;
  readonly embedding_api_key_env?: string | undefined;
  readonly embedding_api_key_file?: string | undefined;
}): EmbeddingsClientSettings | undefined {
  if (config.embedding_endpoint === undefined || config.embedding_model === undefined) return undefined;
  return {
    embedding_endpoint: config.embedding_endpoint,
    embedding_model: config.embedding_model,
    embedding_api_key_env: config.embedding_api_key_env,
    embedding_api_key_file: config.embedding_api_key_file,
  };
}

export function createEmbeddingsClient(settings: EmbeddingsClientSettings, options: EmbeddingsClientOptions = {}): EmbeddingsClient {
  const cap = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  return {
    model: settings.embedding_model,
    embed: async (texts, embedOptions) => {
      if (texts.length === 0) return [];
      const key = resolveApiKey(settings, options.env);
      const body = await post(settings, key, texts, embedOptions.timeoutMs, cap);
      return parseResponse(body, texts.length, embedOptions.expectedDimensions);
    },
  };
}

async function post(
  settings: EmbeddingsClientSettings,
  key: string | undefined,
  texts: readonly string[],
  timeoutMs: number,
  cap: number,
): Promise<string> {
  const signal = AbortSignal.timeout(Math.max(1, timeoutMs));
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  let response: Response;
  try {
    response = await fetch(settings.embedding_endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: settings.embedding_model, input: texts }),
      signal,
      redirect: 'error',
    });
  } catch (error) {
    throw transportError(error, timeoutMs);
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new EmbeddingError('http', `the embeddings endpoint answered HTTP ${response.status}`, { status: response.status });
  }
  return readCapped(response, cap, timeoutMs);
}

async function readCapped(response: Response, cap: number, timeoutMs: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(cap);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > cap) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(cap);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof EmbeddingError) throw error;
    throw transportError(error, timeoutMs);
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

function tooLarge(cap: number): EmbeddingError {
  return new EmbeddingError('too_large', `the embeddings response exceeded ${Math.round(cap / 1024 / 1024)} MiB and was abandoned`);
}

function transportError(error: unknown, timeoutMs: number): EmbeddingError {
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new EmbeddingError('timeout', `the embeddings endpoint did not answer within ${timeoutMs} ms`);
  }
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : name === 'TypeError' ? 'network error' : 'error';
  return new EmbeddingError('unreachable', `the embeddings endpoint is unreachable (${code})`);
}

function invalid(why: string): EmbeddingError {
  return new EmbeddingError('invalid_response', `the embeddings endpoint sent an unusable answer: ${why}`);
}

function parseResponse(text: string, count: number, expectedDimensions: number | undefined): Float32Array[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid('the body is not JSON');
  }
  const data = (json as { data?: unknown } | null)?.data;
  if (json === null || typeof json !== 'object' || !Array.isArray(data)) throw invalid('no "data" array');
  if (data.length !== count) throw invalid(`${data.length} embeddings for ${count} inputs`);

  const indexes = data.map((item) => (item as { index?: unknown } | null)?.index);
  // Servers that omit `index` answer in input order; a partial set of indexes is a broken answer.
  const ordered = indexes.every((i) => i === undefined);
  const vectors = new Array<Float32Array | undefined>(count);
  let dims = expectedDimensions;
  data.forEach((item: unknown, position) => {
    const embedding = (item as { embedding?: unknown } | null)?.embedding;
    if (item === null || typeof item !== 'object' || !Array.isArray(embedding)) throw invalid(`item ${position} has no "embedding" array`);
    const index = ordered ? position : indexes[position];
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined) {
      throw invalid(`item ${position} has a missing, repeated or out-of-range "index"`);
    }
    if (embedding.length === 0) throw invalid(`item ${position} is an empty vector`);
    if (dims === undefined) dims = embedding.length;
    if (embedding.length !== dims) {
      throw invalid(
        expectedDimensions !== undefined && embedding.length !== expectedDimensions
          ? `item ${position} has ${embedding.length} dimensions where ${expectedDimensions} were expected`
          : `the vectors have inconsistent dimensions (${dims} and ${embedding.length})`,
      );
    }
    if (!embedding.every((x) => typeof x === 'number')) throw invalid(`item ${position} holds a value that is not a number`);
    const unit = normalizeVector(embedding as number[]);
    if (unit === undefined) throw invalid(`item ${position} holds a non-finite value or is all zeros`);
    vectors[index] = unit;
  });
  return vectors as Float32Array[];
}
