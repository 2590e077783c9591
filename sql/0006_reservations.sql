-- Advisory file reservations (issue 15): a display name's claim on paths or
-- globs of one repository, exclusive or shared, until `expires_at`.
-- `repository` is the real path of the repository's git common directory
-- (shared by all worktrees of one clone). `owner` is the owner token of the
-- session that made the claim: a reservation is live only while a live
-- session row has the same sender and owner, so it ends with the process
-- that holds the name, by the same rules as the name itself.
-- Times are integer milliseconds since the Unix epoch.
CREATE TABLE reservations (
  repository TEXT NOT NULL,
  pattern TEXT NOT NULL,
  holder TEXT NOT NULL,
  owner TEXT NOT NULL,
  exclusive INTEGER NOT NULL CHECK (exclusive IN (0, 1)),
  reason TEXT,
  reserved_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (repository, holder, pattern)
) WITHOUT ROWID;

CREATE INDEX reservations_expires_at ON reservations (expires_at);
CREATE INDEX reservations_holder ON reservations (holder, owner);
