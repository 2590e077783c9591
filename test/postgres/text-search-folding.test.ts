/**
 * The text index's migration (sql/postgres/0014_text_search_folding.sql):
 * the messages a bus already held are indexed again under unicode61's
 * tokens, and the tokens do not depend on the database's locale (a "C"
 * database, whose own character classes hold ASCII only, splits and folds
 * the same words). Search itself is tested on every engine in test/search/.
 */
import { describe, expect, inject, it } from 'vitest';
import { Database } from '../../src/db/contract/database.js';
import type { DriverCapabilities } from '../../src/db/contract/driver.js';
import { relevanceTokens } from '../../src/bus/search-relevance.js';
import { applyMigration, loadMigrations } from '../../src/db/open/migrations.js';
import { connectPostgres, openPostgresDatabase, postgresMigrationsDir } from '../../src/db/open/open-postgres.js';
import { closeAfterTest, connectPg, freshDatabase, withDatabase } from './pg-test.js';

const CONTENT = 'Naïve CAFÉ, mail sam@example.com about v1.2.3 and 東京タワー';
const TOKENS = ['naive', 'cafe', 'mail', 'sam', 'example', 'com', 'about', 'v1', '2', '3', 'and', '東京タワー'];

function insert(db: Database<DriverCapabilities>, content: string): number {
  const sql = "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('general', 'sam', 'test', 1, 'message', ?, ?) RETURNING seq";
  return Number(db.get<{ seq: number }>(sql, [content, content.length])?.seq);
}

/** The index's lexemes of a message, by position. */
function lexemes(db: Database<DriverCapabilities>, seq: number): string[] {
  const sql = 'SELECT t.lexeme AS term FROM messages m, unnest(m.content_tsv) AS t, unnest(t.positions) AS p(pos) WHERE m.seq = ? ORDER BY p.pos';
  return db.all<{ term: string }>(sql, [seq]).map((r) => r.term);
}

/** The seqs whose index matches a tsquery of the search's own form (search-text-window.ts). */
function matching(db: Database<DriverCapabilities>, query: string): number[] {
  return db.all<{ seq: number }>('SELECT seq FROM messages WHERE content_tsv @@ agentbus_search_query(?) ORDER BY seq', [query]).map((r) => r.seq);
}

describe('the text index on PostgreSQL', () => {
  it('indexes the messages a bus held before the migration again, as unicode61 tokens, in a GIN index', async () => {
    const url = await freshDatabase();
    const db = closeAfterTest(await connectPostgres({ url }));
    const migrations = loadMigrations(postgresMigrationsDir());
    const folding = migrations.find((m) => m.name.endsWith('_text_search_folding.sql'));
    expect(folding).toBeDefined();
    for (const m of migrations.filter((m) => m.version < (folding?.version ?? 0))) applyMigration(db, m, 1);
    const old = insert(db, CONTENT);
    // The column before: the simple parser kept the accents and read the address and the version whole.
    expect(lexemes(db, old)).toContain('sam@example.com');
    expect(lexemes(db, old)).toContain('café');
    applyMigration(db, folding!, 2);
    const added = insert(db, CONTENT.toUpperCase());
    expect(lexemes(db, old)).toEqual(TOKENS);
    expect(lexemes(db, added)).toEqual(TOKENS);
    expect(matching(db, "'cafe' & ('naive' <-> 'cafe') & 'example'")).toEqual([old, added]);
    expect(matching(db, "'NAIVE' <-> 'CAF':*")).toEqual([old, added]);
    expect(matching(db, "'cafe' <-> 'naive'")).toEqual([]);
    const index = db.get<{ def: string }>("SELECT indexdef AS def FROM pg_indexes WHERE indexname = 'messages_content_tsv'")?.def ?? '';
    expect(index).toMatch(/USING gin \(content_tsv\)/);
  });

  it('splits words where the ranking does at every character of the Basic Multilingual Plane and beyond', async () => {
    // The migration's character classes were generated from these Unicode properties (its header):
    // a character that splits here but not in relevanceTokens, or the reverse, means they need generating again.
    const { db } = await openPostgresDatabase({ url: await freshDatabase() });
    closeAfterTest(db);
    const points = [...Array.from({ length: 0xffff - 0x7f }, (_, i) => i + 0x80).filter((c) => c < 0xd800 || c > 0xdfff), 0x1f389, 0x20000, 0x1d400, 0xf0000];
    // Between Latin letters (whose marks go) and Greek ones (whose marks stay, composed where NFC composes them).
    for (const letter of ['a', 'α']) {
      const sql = "SELECT c, array_length(string_to_array(btrim(agentbus_search_words(? || chr(c) || ?)), ' '), 1) AS n FROM unnest(?::int[]) AS c ORDER BY c";
      const rows = db.all<{ c: number; n: number }>(sql, [letter, letter, `{${points.join(',')}}`]);
      const differ = rows.filter((r) => r.n !== relevanceTokens(`${letter}${String.fromCodePoint(r.c)}${letter}`).length).map((r) => r.c.toString(16));
      expect(rows).toHaveLength(points.length);
      expect(new Set(rows.map((r) => r.n))).toEqual(new Set([1, 2]));
      expect(differ).toEqual([]);
    }
  });

  it('splits and folds the same words in a database whose locale is C', async () => {
    const name = `agentbus_c${process.pid}_${Date.now() % 100_000}`;
    const admin = new Database(await connectPg(inject('pgUrl')));
    admin.exec(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'`);
    const { db } = await openPostgresDatabase({ url: withDatabase(inject('pgUrl'), name) });
    closeAfterTest(db);
    expect(db.get<{ ctype: string }>('SELECT datctype AS ctype FROM pg_database WHERE datname = current_database()')?.ctype).toBe('C');
    const seq = insert(db, CONTENT);
    expect(lexemes(db, seq)).toEqual(TOKENS);
    expect(matching(db, "'Naive' <-> 'Cafe' & '東京タワー'")).toEqual([seq]);
  });
});
