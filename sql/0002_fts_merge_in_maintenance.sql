-- FTS5 segment merging moves from every writer into the maintenance tick.
--
-- With FTS5's default automerge, the transaction that flushes a segment also
-- merges about (pages written) x (levels) pages of older segments. For the
-- tick's eviction chunks that was up to ~2,000 pages: 190-310 ms holds of the
-- writer lock, against a goal of 50 ms. With automerge off, a flush only
-- writes its own segment (and merges a level that reaches crisismerge = 16
-- segments); the tick then merges in bounded steps of its own
-- (src/maintenance/fts-merge.ts), each a short transaction.
INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
