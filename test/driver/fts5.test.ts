import { describe, expect, it } from 'vitest';
import { openTestDatabase, tempDir } from '../support/test-driver.js';

describe('FTS5 external content kept by triggers', () => {
  it('answers MATCH after insert, update and delete', async () => {
    const { db } = await openTestDatabase(tempDir());
    const insert = (content: string) =>
      db.transaction(() => {
        db.run("INSERT OR IGNORE INTO channels (name, kind) VALUES ('c', 'ordinary')");
        return db.run(
          "INSERT INTO messages (channel, sender, context, created_at, type, content, bytes) VALUES ('c', 's', 'x', 0, 'text', ?, 1)",
          [content],
        ).lastInsertRowid;
      });
    const match = (q: string) =>
      db
        .all<{ seq: number }>(
          'SELECT m.seq FROM messages_fts JOIN messages m ON m.seq = messages_fts.rowid WHERE messages_fts MATCH ? ORDER BY m.seq',
          [q],
        )
        .map((r) => r.seq);

    const a = insert('the quick brown fox');
    const b = insert('a lazy dog sleeps');
    expect(match('quick')).toEqual([a]);
    expect(match('do*')).toEqual([b]);

    db.transaction(() => db.run("UPDATE messages SET content = 'a quick dog' WHERE seq = ?", [b]));
    expect(match('quick')).toEqual([a, b]);
    expect(match('lazy')).toEqual([]);

    db.transaction(() => db.run('DELETE FROM messages WHERE seq = ?', [a]));
    expect(match('quick')).toEqual([b]);
    expect(match('fox')).toEqual([]);
    db.run("INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)");
    db.close();
  });
});
