/**
 * The part of the `pg` client (8.x, a dev dependency inlined into the
 * postgres bundle) that the bridge worker uses; the package ships no types
 * and @types/pg would be a new dependency.
 */
declare module 'pg' {
  export interface FieldDef {
    readonly name: string;
    readonly dataTypeID: number;
  }
  export interface QueryResult {
    readonly rows: Record<string, unknown>[];
    readonly rowCount: number | null;
    readonly fields: readonly FieldDef[];
  }
  export interface TypeParsers {
    getTypeParser(oid: number, format?: string): (text: string) => unknown;
  }
  export interface ClientConfig {
    readonly connectionString: string;
    readonly password?: string;
    readonly connectionTimeoutMillis?: number;
    readonly statement_timeout?: number;
    readonly lock_timeout?: number;
    readonly query_timeout?: number;
    readonly application_name?: string;
    readonly types?: TypeParsers;
    readonly keepAlive?: boolean;
    readonly keepAliveInitialDelayMillis?: number;
  }
  export interface QueryConfig {
    readonly text: string;
    readonly values?: readonly unknown[];
    readonly name?: string;
  }
  export class Client {
    constructor(config: ClientConfig);
    connect(): Promise<void>;
    query(text: string): Promise<QueryResult | QueryResult[]>;
    query(config: QueryConfig): Promise<QueryResult>;
    end(): Promise<void>;
    on(event: 'error', listener: (error: Error) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): this;
    getTransactionStatus(): 'I' | 'T' | 'E' | null;
    readonly processID: number | null;
    readonly connection: { readonly stream: { destroy(): void } };
  }
  export const types: TypeParsers;
  const pg: { Client: typeof Client; types: TypeParsers };
  export default pg;
}
