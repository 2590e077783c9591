-- Direct messages: a message addressed to display names instead of a channel.
--
-- A direct message is stored in the reserved channel '@direct' (a name no
-- caller can give: channel names start with a letter or digit), so seq,
-- retention, capacity eviction, search and the byte budget treat it as any
-- message. Who it is for, and how far each addressee has got with it, is one
-- row per addressee here. Delivery is per row, not by a cursor, so a reply can
-- be taken out of order (ask-and-wait) without skipping or repeating others.
INSERT INTO channels (name, kind, created_seq, evicted_before_seq)
  SELECT '@direct', 'ordinary', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'messages'), 0), 0
  WHERE NOT EXISTS (SELECT 1 FROM channels WHERE name = '@direct');

CREATE TABLE direct_recipients (
  -- The direct message; its row goes when the message is evicted.
  seq INTEGER NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  -- The addressee's display name (a child such as 'Sam/task' is its own addressee).
  addressee TEXT NOT NULL,
  -- Where the addressee is in the send's `to` list, from 0.
  position INTEGER NOT NULL,
  -- unread: not yet in a receive; delivered: in a batch not yet acknowledged; acknowledged.
  state TEXT NOT NULL DEFAULT 'unread' CHECK (state IN ('unread', 'delivered', 'acknowledged')),
  -- The batch token while delivered, else NULL.
  pending_token TEXT,
  -- The latest delivery (ms), NULL while unread.
  delivered_at INTEGER,
  -- The acknowledgement (ms), NULL until acknowledged.
  acked_at INTEGER,
  PRIMARY KEY (addressee, seq),
  CHECK ((pending_token IS NOT NULL) = (state = 'delivered'))
) WITHOUT ROWID;

CREATE INDEX direct_recipients_seq ON direct_recipients (seq);
-- What a receive looks for: an addressee's unread (or delivered) messages, by seq,
-- without reading past the acknowledged ones, which pile up.
CREATE INDEX direct_recipients_state ON direct_recipients (addressee, state, seq);

-- Every display name ever registered on this bus, so a direct message to a
-- name nobody ever had is refused (a typo must not drop mail into a void)
-- while one to a name that is offline now waits for it. Kept by a trigger so
-- an older agentbus's registrations count too.
CREATE TABLE known_names (
  name TEXT PRIMARY KEY,
  first_seen INTEGER NOT NULL
) WITHOUT ROWID;

INSERT OR IGNORE INTO known_names (name, first_seen)
  SELECT sender, min(t) FROM (
    SELECT sender, registered_at AS t FROM sessions
    UNION ALL SELECT sender, last_activity FROM subscriptions
    UNION ALL SELECT sender, min(created_at) FROM messages GROUP BY sender
  ) GROUP BY sender;

CREATE TRIGGER known_names_session AFTER INSERT ON sessions BEGIN
  INSERT OR IGNORE INTO known_names (name, first_seen) VALUES (new.sender, new.registered_at);
END;
