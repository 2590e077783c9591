-- agentbus schema, version 1: the design's whole "Storage schema".
-- Times are integer milliseconds since the Unix epoch. Booleans are 0/1.

CREATE TABLE channels (
  name TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('ordinary', 'memory')),
  created_seq INTEGER NOT NULL DEFAULT 0,
  -- Every message with seq below this was evicted; cursors below it get a gap notice.
  evicted_before_seq INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The default channels `agentbus identity` tells every agent about.
INSERT INTO channels (name, kind) VALUES ('general', 'ordinary'), ('memory', 'memory');

-- Live sessions only: one row per display name held by a running process.
CREATE TABLE sessions (
  sender TEXT PRIMARY KEY,
  context TEXT NOT NULL,
  owner TEXT NOT NULL,
  heartbeat INTEGER NOT NULL,
  registered_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX sessions_heartbeat ON sessions (heartbeat);

CREATE TABLE subscriptions (
  sender TEXT NOT NULL,
  channel TEXT NOT NULL REFERENCES channels (name) ON DELETE CASCADE,
  cursor_seq INTEGER NOT NULL,
  last_activity INTEGER NOT NULL,
  pending_token TEXT,
  pending_end_seq INTEGER,
  PRIMARY KEY (sender, channel),
  CHECK ((pending_token IS NULL) = (pending_end_seq IS NULL))
) WITHOUT ROWID;

CREATE INDEX subscriptions_channel ON subscriptions (channel);

-- One row per ordinary message and per memory revision; seq is the single global order.
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  channel TEXT NOT NULL REFERENCES channels (name),
  sender TEXT NOT NULL,
  context TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  type TEXT NOT NULL,
  content TEXT NOT NULL,
  reply_to INTEGER,
  metadata TEXT,
  refs TEXT,
  memory_id INTEGER,
  revision INTEGER,
  tombstone INTEGER NOT NULL DEFAULT 0 CHECK (tombstone IN (0, 1)),
  tombstone_at INTEGER,
  bytes INTEGER NOT NULL,
  CHECK ((memory_id IS NULL) = (revision IS NULL))
);

CREATE INDEX messages_channel_seq ON messages (channel, seq);
CREATE INDEX messages_memory ON messages (memory_id, tombstone) WHERE memory_id IS NOT NULL;
CREATE INDEX messages_tombstone_at ON messages (tombstone_at) WHERE tombstone_at IS NOT NULL;
CREATE INDEX messages_created_at ON messages (created_at);
-- Thread search walks reply_to chains.
CREATE INDEX messages_reply_to ON messages (reply_to) WHERE reply_to IS NOT NULL;

-- Full-text index over message content, kept in step with messages by triggers.
-- Queries join messages to exclude tombstoned revisions.
CREATE VIRTUAL TABLE messages_fts USING fts5 (
  content,
  content = 'messages',
  content_rowid = 'seq',
  tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
  INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.seq, old.content);
  INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
END;

-- Normalized float32 vectors of live memory revisions, for one model at a time.
CREATE TABLE embeddings (
  seq INTEGER PRIMARY KEY REFERENCES messages (seq) ON DELETE CASCADE,
  model TEXT NOT NULL,
  vector BLOB NOT NULL
);

-- Idempotency receipts: the original result of a keyed operation.
CREATE TABLE receipts (
  sender TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  result TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (sender, key)
) WITHOUT ROWID;

CREATE INDEX receipts_expires_at ON receipts (expires_at);

CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO leases (name, owner, expires_at) VALUES ('maintenance', '', 0);

-- At most one row, kind 'capacity', while the budget is exhausted.
CREATE TABLE notices (
  kind TEXT PRIMARY KEY,
  message TEXT NOT NULL,
  set_at INTEGER NOT NULL
) WITHOUT ROWID;
