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
