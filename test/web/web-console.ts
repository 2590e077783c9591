/**
 * `agentbus web` as a real process against a data directory an `agentbus
 * mcp` process made: its URL, port and token, and raw HTTP requests with
 * the headers a test chooses (fetch would set Host and Origin itself).
 */
import { request } from 'node:http';
import { startCli, type FollowingCli } from '../cli/cli-follow.js';

export interface WebConsole {
  readonly cli: FollowingCli;
  readonly url: string;
  readonly port: number;
  readonly token: string;
}

/** Starts `agentbus web` (any free port) and waits for the URL it prints. */
export async function startWeb(dataDir: string, args: readonly string[] = []): Promise<WebConsole> {
  const cli = startCli(dataDir, ['web', ...args], { USER: 'dana' });
  const out = await cli.waitFor(/http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/);
  const url = (/http:\/\/127\.0\.0\.1:\d+\/\?token=\S+/.exec(out) as RegExpExecArray)[0];
  const parsed = new URL(url);
  return { cli, url, port: Number(parsed.port), token: parsed.searchParams.get('token') as string };
}

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request to 127.0.0.1:port with exactly these headers; an event stream is read for `streamMs` then dropped. */
export function rawRequest(
  port: number,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; streamMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: options.method ?? 'GET', headers: { Host: `127.0.0.1:${port}`, ...options.headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      res.on('end', done);
      if (options.streamMs !== undefined && /event-stream/.test(String(res.headers['content-type']))) {
        setTimeout(() => {
          req.destroy();
          done();
        }, options.streamMs);
      }
    });
    req.on('error', reject);
    req.end(options.body);
  });
}
