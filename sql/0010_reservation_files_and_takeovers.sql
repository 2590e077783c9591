-- Whether a plain-name reservation names a file (issue 29). A plain name
-- such as `src/a.ts` could be a file or a directory, and a directory covers
-- what is below it, so until now it was taken as possibly both: one agent
-- holding `**/*.md` conflicted with every single-file claim (`src/a.ts` might
-- have been a directory holding `x.md`). Reserve now asks git (and the
-- worktree) which plain names are files and records it: 1 = a file, which
-- covers only itself; NULL = a directory, a name not yet in the worktree, a
-- pattern with wildcards, or a row an older agentbus wrote, all of which
-- cover what is below them as before.
ALTER TABLE reservations ADD COLUMN file INTEGER CHECK (file IS NULL OR file = 1);

-- Taking over a stalled claim (issue 29). A reservation granted by taking it
-- from a stalled holder names that holder and when (`taken_from`,
-- `taken_at`, ms), for list_reservations, status and the web console.
ALTER TABLE reservations ADD COLUMN taken_from TEXT;
ALTER TABLE reservations ADD COLUMN taken_at INTEGER;

-- What a holder whose claims were taken is told in its next receive: one row
-- per pattern taken, deleted once delivered (a later takeover of the same
-- pattern from the same holder replaces its row, so the table stays small).
CREATE TABLE reservation_takeovers (
  holder TEXT NOT NULL,
  repository TEXT NOT NULL,
  pattern TEXT NOT NULL,
  taken_by TEXT NOT NULL,
  taken_at INTEGER NOT NULL,
  PRIMARY KEY (holder, repository, pattern)
) WITHOUT ROWID;
