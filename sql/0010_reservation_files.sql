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
