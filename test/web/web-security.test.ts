import { networkInterfaces } from 'node:os';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/cli-process.js';
import { startMcp } from '../support/mcp-process.js';
import { tempDir } from '../support/test-driver.js';
import { rawRequest, startWeb, type WebConsole } from './web-console.js';

async function consoleWithBus(): Promise<WebConsole> {
  const dir = tempDir();
  const server = await startMcp(dir);
  await server.call('register', { name: 'Alice' });
  await server.call('send', { as: 'Alice', channel: 'general', content: 'hello' });
  return startWeb(dir);
}

/** `token` with its last character changed (to x, or to y when it ends in x: one token in 64 does). */
function wrongToken(token: string): string {
  return `${token.slice(0, -1)}${token.endsWith('x') ? 'y' : 'x'}`;
}

const PATHS = ['/', '/app.js', '/app.css', '/favicon.svg', '/api/state', '/api/messages', '/api/memories', '/api/search?q=hello', '/events'];

describe('agentbus web: the security rules', () => {
  it('refuses every path, the event stream included, without the token or with a wrong one (403), and answers with it', async () => {
    const web = await consoleWithBus();
    for (const path of PATHS) {
      const missing = await rawRequest(web.port, path, { streamMs: 300 });
      expect(missing.status, path).toBe(403);
      expect(JSON.parse(missing.body).error.message).toMatch(/missing or wrong token/);
      const sep = path.includes('?') ? '&' : '?';
      const wrong = await rawRequest(web.port, `${path}${sep}token=${wrongToken(web.token)}`, { streamMs: 300 });
      expect(wrong.status, path).toBe(403);
      const wrongHeader = await rawRequest(web.port, path, { headers: { 'X-Agentbus-Token': 'nope' }, streamMs: 300 });
      expect(wrongHeader.status, path).toBe(403);
      const good = await rawRequest(web.port, `${path}${sep}token=${web.token}`, { streamMs: 300 });
      expect(good.status, path).toBe(200);
    }
    const events = await rawRequest(web.port, `/events?token=${web.token}`, { streamMs: 300 });
    expect(events.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(events.body).toMatch(/^event: hello\ndata: \{"last_seq":\d+\}/);
    const post = await rawRequest(web.port, '/api/post', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"channel":"general","content":"x"}' });
    expect(post.status).toBe(403);
  });

  it('refuses a foreign Host (DNS rebinding) and a cross-site Origin, and sends no CORS headers', async () => {
    const web = await consoleWithBus();
    const path = `/api/state?token=${web.token}`;
    for (const host of ['evil.example', `evil.example:${web.port}`, '127.0.0.1', `127.0.0.1:${web.port + 1}`, `[::1]:${web.port}`]) {
      const answer = await rawRequest(web.port, path, { headers: { Host: host } });
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.body).error.message).toMatch(/Host ".*" is not this console/);
    }
    expect((await rawRequest(web.port, path, { headers: { Host: `localhost:${web.port}` } })).status).toBe(200);
    for (const origin of ['http://evil.example', `http://127.0.0.1:${web.port + 1}`, 'null', `https://127.0.0.1:${web.port}`]) {
      const answer = await rawRequest(web.port, path, { headers: { Origin: origin } });
      expect(answer.status, origin).toBe(403);
      expect(JSON.parse(answer.body).error.message).toMatch(/cross-site request/);
      const events = await rawRequest(web.port, `/events?token=${web.token}`, { headers: { Origin: origin }, streamMs: 300 });
      expect(events.status, origin).toBe(403);
      const post = await rawRequest(web.port, `/api/post?token=${web.token}`, {
        method: 'POST',
        headers: { Origin: origin, 'Content-Type': 'application/json' },
        body: JSON.stringify({ channel: 'general', content: 'forged' }),
      });
      expect(post.status, origin).toBe(403);
    }
    const own = await rawRequest(web.port, path, { headers: { Origin: `http://127.0.0.1:${web.port}` } });
    expect(own.status).toBe(200);
    const preflight = await rawRequest(web.port, path, { method: 'OPTIONS', headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' } });
    expect(preflight.status).toBe(403);
    for (const answer of [own, preflight]) {
      expect(Object.keys(answer.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    }
    // The forged posts changed nothing.
    const messages = JSON.parse((await rawRequest(web.port, `/api/messages?channel=general&token=${web.token}`)).body).messages;
    expect(messages.map((m: { content: string }) => m.content)).toEqual(['hello']);
  });

  it('sends a strict Content-Security-Policy, nosniff and no-referrer on pages, API answers and refusals', async () => {
    const web = await consoleWithBus();
    for (const path of [`/?token=${web.token}`, `/app.js?token=${web.token}`, `/api/state?token=${web.token}`, '/api/state']) {
      const answer = await rawRequest(web.port, path);
      const csp = String(answer.headers['content-security-policy']);
      expect(csp, path).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['referrer-policy']).toBe('no-referrer');
    }
    const page = await rawRequest(web.port, `/?token=${web.token}`);
    // Nothing fetched from elsewhere: every reference in the page is to this server.
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.body).not.toMatch(/<script>|<style>|\son[a-z]+=/);
  });

  it('listens on the loopback address only', async () => {
    const web = await consoleWithBus();
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a !== undefined && a.family === 'IPv4' && !a.internal)
      .map((a) => (a as { address: string }).address);
    for (const address of others) {
      const outcome = await new Promise<string>((resolve) => {
        const socket = connect({ host: address, port: web.port }, () => {
          socket.destroy();
          resolve('connected');
        });
        socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(outcome, address).toBe('ECONNREFUSED');
    }
    // Whatever interfaces the machine has, the listener itself is bound to 127.0.0.1.
    const listening = await import('node:fs').then((fs) => fs.readFileSync('/proc/net/tcp', 'utf8'));
    const portHex = web.port.toString(16).toUpperCase().padStart(4, '0');
    const rows = listening.split('\n').filter((l) => new RegExp(`^\\s*\\d+: [0-9A-F]{8}:${portHex} 00000000:0000 0A`).test(l));
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatch(new RegExp(`: 0100007F:${portHex} `));
  });

  it('refuses a bad --port and a port in use with the fix', async () => {
    const web = await consoleWithBus();
    const dir = tempDir();
    await startMcp(dir);
    const bad = await runCli(dir, ['web', '--port', 'eighty']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port must be a port number from 0 to 65535/);
    const busy = await runCli(dir, ['web', '--port', String(web.port)]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(new RegExp(`port ${web.port} on 127.0.0.1 is in use: choose another with --port`));
  });
});
