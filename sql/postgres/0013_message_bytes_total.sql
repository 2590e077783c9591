-- The capacity budget's measure on PostgreSQL, kept by triggers: the summed
-- `bytes` of every message row (PostgreSQL's relation sizes do not fall when
-- rows are deleted, so eviction measured by them would never reach its
-- target; docs/drivers.md, "PostgreSQL"). Before this, every send summed the
-- whole messages table (a scan that grows with the bus). PostgreSQL only:
-- SQLite measures its pages (sql/ has no 0013; docs/drivers.md says how the
-- two folders' versions relate).
CREATE TABLE message_bytes (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  total BIGINT NOT NULL
);

INSERT INTO message_bytes (id, total) SELECT 1, COALESCE(sum(bytes), 0) FROM messages;

-- Once per statement over its transition table: a retention or eviction
-- DELETE of many rows updates the total once. Every writer holds the writer
-- lock (the dialect's beginWrite), so the one row is no new contention.
CREATE FUNCTION agentbus_message_bytes_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE message_bytes SET total = total + (SELECT COALESCE(sum(bytes), 0) FROM added);
  RETURN NULL;
END $$;

CREATE FUNCTION agentbus_message_bytes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE message_bytes SET total = total - (SELECT COALESCE(sum(bytes), 0) FROM removed);
  RETURN NULL;
END $$;

CREATE FUNCTION agentbus_message_bytes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE message_bytes SET total = total + NEW.bytes - OLD.bytes;
  RETURN NULL;
END $$;

CREATE TRIGGER message_bytes_insert AFTER INSERT ON messages
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION agentbus_message_bytes_added();
CREATE TRIGGER message_bytes_delete AFTER DELETE ON messages
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION agentbus_message_bytes_removed();
-- No writer changes a row's bytes today; should one, the total follows.
CREATE TRIGGER message_bytes_update AFTER UPDATE OF bytes ON messages FOR EACH ROW
  WHEN (OLD.bytes <> NEW.bytes) EXECUTE FUNCTION agentbus_message_bytes_changed();
