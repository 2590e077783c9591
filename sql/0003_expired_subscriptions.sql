-- Subscriptions the maintenance tick removed for idleness. The design promises
-- that "an absence past cursor_idle_hours yields an `expired` notice and a
-- fresh start"; once the tick has deleted the subscription row, this marker is
-- what lets the subscriber's next receive say so. The receive (or a new
-- subscribe to the channel) consumes it; the tick purges markers nobody
-- consumed within another cursor_idle_hours.
CREATE TABLE expired_subscriptions (
  sender TEXT NOT NULL,
  channel TEXT NOT NULL REFERENCES channels (name) ON DELETE CASCADE,
  expired_at INTEGER NOT NULL,
  PRIMARY KEY (sender, channel)
) WITHOUT ROWID;

CREATE INDEX expired_subscriptions_expired_at ON expired_subscriptions (expired_at);
