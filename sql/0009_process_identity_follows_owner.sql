-- A row's process identity and monotonic readings describe its holder only
-- while they were written by that holder.
--
-- An agentbus from before 0007/0008, still running beside a newer one on the
-- same file, takes over a name, a reservation or the lease by writing `owner`
-- and the wall-clock columns only: the process and monotonic columns kept
-- describing the previous, dead holder, so newer agents judged the live old
-- holder dead (re-granted its name, deleted its exclusive reservations).
-- These triggers live in the file, so they run for every writer, whatever
-- its version: when `owner` changes and the writer left the identity columns
-- as they were, they are cleared, and the row is judged as an older
-- agentbus's row (sessions: by watching the heartbeat change; reservations
-- and the lease: by the wall-clock expiry). Every newer writer that changes
-- `owner` writes a new process identity and a new monotonic reading along
-- with it, so the triggers leave its rows alone (were both values the same
-- by chance, clearing them only makes the row be judged the older way until
-- the holder's next beat).
CREATE TRIGGER sessions_identity_follows_owner
AFTER UPDATE OF owner ON sessions
WHEN NEW.owner IS NOT OLD.owner
  AND NEW.owner_process IS OLD.owner_process
  AND NEW.heartbeat_mono IS OLD.heartbeat_mono
BEGIN
  UPDATE sessions SET owner_process = NULL, clock_domain = NULL, heartbeat_mono = NULL WHERE sender = NEW.sender;
END;

CREATE TRIGGER reservations_clock_follows_owner
AFTER UPDATE OF owner ON reservations
WHEN NEW.owner IS NOT OLD.owner
  AND NEW.expires_mono IS OLD.expires_mono
BEGIN
  UPDATE reservations SET clock_domain = NULL, expires_mono = NULL
  WHERE repository = NEW.repository AND holder = NEW.holder AND pattern = NEW.pattern;
END;

CREATE TRIGGER leases_identity_follows_owner
AFTER UPDATE OF owner ON leases
WHEN NEW.owner IS NOT OLD.owner
  AND NEW.owner_process IS OLD.owner_process
  AND NEW.expires_mono IS OLD.expires_mono
BEGIN
  UPDATE leases SET owner_process = NULL, clock_domain = NULL, expires_mono = NULL WHERE name = NEW.name;
END;
