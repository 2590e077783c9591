// A throwaway PostgreSQL cluster for benchmarks (and, with the postgres
// driver, the test suite): initdb into a temp directory, a free port on
// 127.0.0.1 and a socket directory of its own, stopped and removed by stop().
// Debian's `postgresql` package puts its programs in /usr/lib/postgresql/N/bin,
// not on PATH; initdb refuses to run as root, so as root the cluster runs as
// the `postgres` user the package creates, in a directory that user owns.
import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const INSTALL_HINT = 'install PostgreSQL (Debian: `apt-get install postgresql`; .ci/run does it) or set AGENTBUS_PG_BIN to the folder holding initdb and pg_ctl';

/** The folder holding initdb and pg_ctl: AGENTBUS_PG_BIN, else the newest Debian install, else PATH. */
export function findPgBin() {
  const given = process.env.AGENTBUS_PG_BIN;
  if (given !== undefined) {
    if (!existsSync(join(given, 'initdb'))) throw new Error(`AGENTBUS_PG_BIN=${given} holds no initdb: ${INSTALL_HINT}`);
    return given;
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin', 'initdb')));
    versions.sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(debian, versions[0], 'bin');
  }
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(`no PostgreSQL server programs found: ${INSTALL_HINT}`);
  }
}

/** A port nothing listens on right now (the kernel's pick for port 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster with trust authentication for the role `agentbus`, or,
 * given `password`, password (SCRAM) authentication over TCP, so that a
 * wrong password is refused as on a real server (the socket stays trust);
 * `fsync: false` for a cluster whose durability nothing measures (tests).
 * `hosts`: more addresses to listen on beside 127.0.0.1, each { address,
 * cidr }, with a pg_hba line admitting `cidr` the way 127.0.0.1 is (the
 * two-machine test's veth addresses); the addresses must exist at start.
 * Resolves to { url, port, dir, socketDir, stop, restart, psql }; stop() is
 * idempotent and synchronous, so it can run in an exit handler; restart()
 * stops and starts the server (a server restart under running clients);
 * psql(sql) runs SQL as `agentbus` over the socket and returns its output.
 */
export async function startCluster({ password, fsync = true, hosts = [] } = {}) {
  const bin = findPgBin();
  const dir = mkdtempSync(join(tmpdir(), 'agentbus-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (program, args) => {
    const file = join(bin, program);
    const argv = asRoot ? ['-u', 'postgres', '--', file, ...args] : args;
    return execFileSync(asRoot ? 'runuser' : file, argv, { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  };
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0);
  const data = join(dir, 'data');
  let auth = ['-A', 'trust'];
  if (password !== undefined) {
    const pwfile = join(dir, 'pwfile');
    writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
    if (asRoot) chownSync(pwfile, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0);
    auth = ['--auth-host=scram-sha-256', '--auth-local=trust', `--pwfile=${pwfile}`];
  }
  run('initdb', ['-D', data, ...auth, '-U', 'agentbus', '--no-sync']);
  const method = password === undefined ? 'trust' : 'scram-sha-256';
  if (hosts.length > 0) appendFileSync(join(data, 'pg_hba.conf'), hosts.map((h) => `host all all ${h.cidr} ${method}\n`).join(''));
  const port = await freePort();
  const listen = ['127.0.0.1', ...hosts.map((h) => h.address)].join(',');
  // fsync off (the tests' clusters) spares the shutdown checkpoint flushing every database a test made.
  const options = `-p ${port} -k ${dir} -c listen_addresses=${listen} -c fsync=${fsync ? 'on' : 'off'}`;
  const start = () => run('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', 'start']);
  start();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const restart = () => {
    run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    start();
  };
  const psql = (sql) => run('psql', ['-h', dir, '-p', String(port), '-U', 'agentbus', '-d', 'postgres', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', sql]);
  const user = password === undefined ? 'agentbus' : `agentbus:${encodeURIComponent(password)}`;
  return { url: `postgres://${user}@127.0.0.1:${port}/postgres`, port, dir, socketDir: dir, stop, restart, psql, stopServer: () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']), startServer: start };
}
