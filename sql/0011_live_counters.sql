-- Counters kept by triggers so reads stay flat as the bus grows.
--
-- Live (not tombstoned) messages per channel, kept by triggers, so `agentbus
-- status` and the web console read each channel's count without scanning
-- messages: counting a channel of a million messages read every row (the
-- tombstone flag is in no index), about half a second per status.
CREATE TABLE channel_message_counts (
  channel TEXT PRIMARY KEY,
  live INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO channel_message_counts (channel, live)
  SELECT channel, count(*) FROM messages WHERE tombstone = 0 GROUP BY channel;

CREATE TRIGGER channel_message_counts_insert AFTER INSERT ON messages WHEN new.tombstone = 0 BEGIN
  INSERT INTO channel_message_counts (channel, live) VALUES (new.channel, 1)
    ON CONFLICT (channel) DO UPDATE SET live = live + 1;
END;

CREATE TRIGGER channel_message_counts_delete AFTER DELETE ON messages WHEN old.tombstone = 0 BEGIN
  UPDATE channel_message_counts SET live = live - 1 WHERE channel = old.channel;
END;

CREATE TRIGGER channel_message_counts_update AFTER UPDATE OF tombstone, channel ON messages
  WHEN old.tombstone <> new.tombstone OR old.channel <> new.channel BEGIN
  UPDATE channel_message_counts SET live = live - 1 WHERE channel = old.channel AND old.tombstone = 0;
  INSERT INTO channel_message_counts (channel, live) SELECT new.channel, 1 WHERE new.tombstone = 0
    ON CONFLICT (channel) DO UPDATE SET live = live + 1;
END;

-- A number that changes whenever the set of live memory revisions may have
-- (a memory written, edited, deleted or purged), so semantic search keeps
-- its list of live revisions between queries and reads it again only then:
-- reading 100,000 seqs cost more than the whole ranking.
CREATE TABLE memory_generation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  generation INTEGER NOT NULL
);

INSERT INTO memory_generation (id, generation) VALUES (1, 0);

CREATE TRIGGER memory_generation_insert AFTER INSERT ON messages WHEN new.memory_id IS NOT NULL BEGIN
  UPDATE memory_generation SET generation = generation + 1;
END;

CREATE TRIGGER memory_generation_update AFTER UPDATE OF tombstone, memory_id, channel ON messages
  WHEN old.memory_id IS NOT NULL OR new.memory_id IS NOT NULL BEGIN
  UPDATE memory_generation SET generation = generation + 1;
END;

CREATE TRIGGER memory_generation_delete AFTER DELETE ON messages WHEN old.memory_id IS NOT NULL BEGIN
  UPDATE memory_generation SET generation = generation + 1;
END;
