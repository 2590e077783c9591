/**
 * A real OpenAI-compatible embeddings server on 127.0.0.1 for tests: serves
 * `POST /v1/embeddings` with deterministic vectors (a hash-seeded bag of
 * words, so texts sharing words are close) and can be told to misbehave.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the server answers the next requests. */
export type ServerMode =
  | 'ok'
  | 'http_500'
  | 'hang'
  | 'malformed_json'
  | 'wrong_shape'
  | 'wrong_dimension'
  | 'inconsistent_dimensions'
  | 'short_list'
  | 'nan'
  | 'empty_vector'
  | 'huge_body';

export interface RecordedRequest {
  readonly model: string;
  readonly input: readonly string[];
  readonly authorization: string | undefined;
}

export interface EmbeddingsServer {
  /** The full endpoint URL, e.g. http://127.0.0.1:PORT/v1/embeddings. */
  readonly url: string;
  /** Every request answered or attempted, in order. */
  readonly requests: RecordedRequest[];
  /** Current behaviour; change it at any time. */
  mode: ServerMode;
  /** Dimensions of the vectors served (per model name when listed). */
  dimensions: number;
  /** Texts containing this marker get HTTP 400 (as a model refuses an over-long input). */
  rejectMarker: string | undefined;
  close(): Promise<void>;
}

/** FNV-1a: a small stable string hash. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32: a deterministic generator in [-1, 1). */
function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

/** The vector the server gives `text` under `model` (not normalized; the client normalizes). */
export function deterministicVector(text: string, model: string, dimensions: number): number[] {
  const out = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? ['(empty)'];
  for (const word of words) {
    const next = generator(hash(`${model}\u0000${word}`));
    for (let i = 0; i < dimensions; i++) out[i] = (out[i] as number) + next();
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startEmbeddingsServer(options: { dimensions?: number } = {}): Promise<EmbeddingsServer> {
  const hanging = new Set<ServerResponse>();
  const state: Omit<EmbeddingsServer, 'url' | 'close'> = {
    requests: [],
    mode: 'ok',
    dimensions: options.dimensions ?? 64,
    rejectMarker: undefined,
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(await readBody(req)) as { model: string; input: string[] };
    state.requests.push({ model: body.model, input: body.input, authorization: req.headers.authorization });
    const send = (payload: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const vectors = body.input.map((text) => deterministicVector(text, body.model, state.dimensions));
    const data = (vs: unknown[]) => ({ object: 'list', model: body.model, data: vs.map((embedding, index) => ({ object: 'embedding', index, embedding })) });

    if (state.rejectMarker !== undefined && body.input.some((t) => t.includes(state.rejectMarker as string))) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"input too long"}}');
      return;
    }
    switch (state.mode) {
      case 'ok':
        // Items in reverse order with their true index, as some servers answer out of order.
        return send({ ...data(vectors), data: data(vectors).data.reverse() });
      case 'http_500':
        res.writeHead(500).end('{"error":"boom"}');
        return;
      case 'hang':
        hanging.add(res);
        return;
      case 'malformed_json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": [ {"embedding": [0.1, 0.2');
        return;
      case 'wrong_shape':
        return send({ embeddings: vectors });
      case 'wrong_dimension':
        return send(data(vectors.map((v) => v.slice(0, Math.max(1, v.length - 1)))));
      case 'inconsistent_dimensions':
        return send(data(vectors.map((v, i) => (i === 0 ? v : v.concat([0.5])))));
      case 'short_list':
        return send(data(vectors.slice(0, -1)));
      case 'nan':
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify(data(vectors)).replace(/\[(-?[0-9.e-]+),/, '[1e999,'),
        );
        return;
      case 'empty_vector':
        return send(data(vectors.map(() => [])));
      case 'huge_body': {
        // Streams far more than any client cap without declaring a length.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 200 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
    }
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const self = state as EmbeddingsServer;
  Object.assign(self, {
    url: `http://127.0.0.1:${port}/v1/embeddings`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
  return self;
}
