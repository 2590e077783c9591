/** Types of pg-cluster.js for the TypeScript tests. */
export interface Cluster {
  /** postgres://agentbus[:password]@127.0.0.1:PORT/postgres */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  readonly socketDir: string;
  /** Stops the server and removes its directory; idempotent. */
  stop(): void;
  /** Stops and starts the server (fast shutdown). */
  restart(): void;
  /** Stops the server, keeping its directory (startServer() brings it back). */
  stopServer(): void;
  startServer(): void;
  /** Runs SQL as `agentbus` over the socket; returns psql's unaligned output. */
  psql(sql: string): string;
}
export function findPgBin(): string;
/** An address beside 127.0.0.1 the cluster listens on, and the clients pg_hba admits there. */
export interface ClusterHost {
  readonly address: string;
  readonly cidr: string;
}
export function startCluster(options?: { password?: string; fsync?: boolean; hosts?: readonly ClusterHost[] }): Promise<Cluster>;
