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
