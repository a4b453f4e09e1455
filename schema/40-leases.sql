-- Snowflake fallback leases, identical table on both servers; each server holds
-- only the worker numbers of its own parity (50-*-workers.sql), so every worker
-- number has exactly one authority.
--
-- A lease is a window of ID time (layout ms, since 2026-01-01T00:00:00Z): the
-- holder may mint timestamps only in [window_start, window_end]. A claim takes a
-- row whose window_end is below the claimant's now (FOR UPDATE SKIP LOCKED), so
-- two holders of one number own disjoint timestamp ranges, whatever their clocks.
USE idgen;

CREATE TABLE IF NOT EXISTS idgen_leases (
  worker       SMALLINT UNSIGNED NOT NULL PRIMARY KEY,
  holder       VARCHAR(160) NOT NULL DEFAULT '',
  window_start BIGINT UNSIGNED NOT NULL DEFAULT 0,
  window_end   BIGINT UNSIGNED NOT NULL DEFAULT 0,
  claims       BIGINT UNSIGNED NOT NULL DEFAULT 0,
  updated_at   DATETIME(3) NULL,
  CONSTRAINT worker_range CHECK (worker <= 1023)
) ENGINE=InnoDB;

-- The claim's SELECT ... ORDER BY window_end, worker LIMIT 1 FOR UPDATE SKIP LOCKED
-- reads this index in order and locks only the row it returns; without it MariaDB
-- locks every row it sorts, and concurrent claims find no free number (docs/design.md 3.3).
CREATE INDEX IF NOT EXISTS idgen_leases_free ON idgen_leases (window_end, worker);

-- Guards (docs/design.md 6.5): while a window may be open (window_end not an hour,
-- the largest max_clock_skew_ms, before this server's now in layout ms), the
-- database refuses to move window_end back, empty the holder, start a window that
-- is not after the old one, renumber or delete the row: any of them would let a
-- second idserver claim a number whose holder still mints. The writers pass: a
-- claim starts its window after the old window_end, an extend or a re-adoption
-- only raises window_end, the operators' repair only raises it, and the release
-- (the one backward move) names the holder it releases in @idgen_release.
DELIMITER //
CREATE OR REPLACE TRIGGER idgen_leases_no_free BEFORE UPDATE ON idgen_leases FOR EACH ROW
BEGIN
  IF OLD.window_end >= CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000 - 3600000 THEN
    IF NEW.worker <> OLD.worker THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
        'idgen: a lease row is renumbered only an hour after its window ended (docs/design.md 6.5)';
    END IF;
    IF NEW.window_end < OLD.window_end AND NOT (@idgen_release IS NOT NULL AND
        @idgen_release = OLD.holder AND NEW.holder = OLD.holder) THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
        'idgen: a lease window that may be open never moves back; only its holder releases it (docs/design.md 6.5)';
    END IF;
    IF NEW.holder = '' AND OLD.holder <> '' THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
        'idgen: a held worker is never freed by hand: holder emptied while its window may be open (docs/design.md 6.5)';
    END IF;
    IF NEW.window_start <> OLD.window_start AND NEW.window_start <= OLD.window_end THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
        'idgen: a new lease window starts after the old one ends (docs/design.md 6.5)';
    END IF;
  END IF;
END//
CREATE OR REPLACE TRIGGER idgen_leases_no_delete BEFORE DELETE ON idgen_leases FOR EACH ROW
BEGIN
  IF OLD.window_end >= CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) - 1767225600000 - 3600000 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a lease row is deleted only an hour after its window ended (docs/design.md 6.5)';
  END IF;
END//
DELIMITER ;
