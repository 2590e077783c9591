/**
 * A connection listed in the opener registry (opener-registry.ts): what it
 * adds to the driver's connection is only that closing it also removes its
 * registry entry, so a conversion or restore stops seeing it the moment it is
 * closed. Everything else is the driver's connection, passed through.
 */
import type { Connection, SqliteCapabilities, Statement } from '../contract/driver.js';

export class RegisteredConnection implements Connection<SqliteCapabilities> {
  constructor(
    private readonly connection: Connection<SqliteCapabilities>,
    private readonly unregister: () => void,
  ) {}

  get path(): string {
    return this.connection.path;
  }

  get capabilities(): SqliteCapabilities {
    return this.connection.capabilities;
  }

  get inTransaction(): boolean {
    return this.connection.inTransaction;
  }

  get openStatements(): number {
    return this.connection.openStatements;
  }

  exec(sql: string): void {
    this.connection.exec(sql);
  }

  prepare(sql: string): Statement {
    return this.connection.prepare(sql);
  }

  /** Closes the connection, then removes its registry entry, even when the close fails. */
  close(): void {
    try {
      this.connection.close();
    } finally {
      this.unregister();
    }
  }
}
