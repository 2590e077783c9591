-- Who holds a name, and ages that a wall-clock jump cannot fool.
--
-- Until now a session was live while its wall-clock heartbeat was within
-- 30 s: a crashed agent's name stayed taken for 30 s (so resuming it gave a
-- suffixed name and the re-sent message a second row), a clock set back kept
-- a dead name for hours, a clock set forward handed a live name to another
-- process. Now a session row records its owning process, so a name whose
-- owner is certainly dead is free at once, and the owner's monotonic clock
-- reading at each heartbeat, so owners in another pid namespace are judged
-- on a clock that does not jump (src/bus/session-liveness.ts).
-- Columns are NULL on rows written before this migration or by an older
-- agentbus; such rows are judged by watching their heartbeat change.
ALTER TABLE sessions ADD COLUMN owner_process TEXT;
ALTER TABLE sessions ADD COLUMN clock_domain TEXT;
ALTER TABLE sessions ADD COLUMN heartbeat_mono INTEGER;

-- When an observer whose monotonic clock cannot be compared with the owner's
-- first saw this owner's current heartbeat value, on the observer's clock. A
-- heartbeat value unchanged for 30 s of that clock means the owner stopped.
CREATE TABLE session_sightings (
  sender TEXT NOT NULL,
  clock_domain TEXT NOT NULL,
  owner TEXT NOT NULL,
  heartbeat INTEGER NOT NULL,
  seen_mono INTEGER NOT NULL,
  PRIMARY KEY (sender, clock_domain)
) WITHOUT ROWID;

-- A receipt's age is measured on a monotonic clock: when and on which clock it
-- was made. expires_at stays for older agentbus versions sharing the file.
ALTER TABLE receipts ADD COLUMN clock_domain TEXT;
ALTER TABLE receipts ADD COLUMN created_mono INTEGER;
CREATE INDEX receipts_clock_age ON receipts (clock_domain, created_mono);

-- The maintenance lease, likewise: its holder's process and its expiry on the
-- holder's monotonic clock.
ALTER TABLE leases ADD COLUMN owner_process TEXT;
ALTER TABLE leases ADD COLUMN clock_domain TEXT;
ALTER TABLE leases ADD COLUMN expires_mono INTEGER;
