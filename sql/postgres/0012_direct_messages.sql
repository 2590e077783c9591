-- Direct messages on PostgreSQL: the twin of sql/0012_direct_messages.sql
-- (its comments say what each part is for). What differs: the reserved
-- channel's created_seq comes from the identity sequence of messages, the
-- tables are ordinary heap tables with the same keys, INSERT OR IGNORE is
-- ON CONFLICT DO NOTHING, and the trigger is a PL/pgSQL function.
INSERT INTO channels (name, kind, created_seq, evicted_before_seq)
  SELECT '@direct', 'ordinary', (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM messages_seq_seq), 0
  WHERE NOT EXISTS (SELECT 1 FROM channels WHERE name = '@direct');

ALTER TABLE messages ADD COLUMN direct_to TEXT;

CREATE TABLE direct_recipients (
  seq BIGINT NOT NULL REFERENCES messages (seq) ON DELETE CASCADE,
  addressee TEXT NOT NULL,
  position INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'unread' CHECK (state IN ('unread', 'delivered', 'acknowledged')),
  pending_token TEXT,
  delivered_at BIGINT,
  acked_at BIGINT,
  PRIMARY KEY (addressee, seq),
  CHECK ((pending_token IS NOT NULL) = (state = 'delivered'))
);

CREATE INDEX direct_recipients_seq ON direct_recipients (seq);
CREATE INDEX direct_recipients_state ON direct_recipients (addressee, state, seq);

CREATE TABLE known_names (
  name TEXT PRIMARY KEY,
  first_seen BIGINT NOT NULL
);

INSERT INTO known_names (name, first_seen)
  SELECT sender, min(t) FROM (
    SELECT sender, registered_at AS t FROM sessions
    UNION ALL SELECT sender, last_activity FROM subscriptions
    UNION ALL SELECT sender, min(created_at) FROM messages GROUP BY sender
  ) AS seen GROUP BY sender
  ON CONFLICT (name) DO NOTHING;

CREATE FUNCTION agentbus_known_names_session() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO known_names (name, first_seen) VALUES (NEW.sender, NEW.registered_at) ON CONFLICT (name) DO NOTHING;
  RETURN NULL;
END;
$$;

CREATE TRIGGER known_names_session AFTER INSERT ON sessions FOR EACH ROW
  EXECUTE FUNCTION agentbus_known_names_session();
