-- A reservation's expiry on its maker's monotonic clock, so a wall clock set
-- forward never ends a live claim early (another agent could then edit the
-- file) and one set back never keeps it past its ttl. `clock_domain` says
-- which monotonic clock `expires_mono` was read on (src/clock.ts); a reader
-- on another clock, and every row an older agentbus writes (both NULL), is
-- judged by `expires_at` on the wall clock as before.
ALTER TABLE reservations ADD COLUMN clock_domain TEXT;
ALTER TABLE reservations ADD COLUMN expires_mono INTEGER;
