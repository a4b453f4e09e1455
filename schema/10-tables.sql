-- idgen ticket server schema, identical on the odd and the even server.
-- Loaded by scripts/dbpair.sh (make run, tests) and by docker-compose at first start.

CREATE DATABASE IF NOT EXISTS idgen;
USE idgen;

-- The Flickr ticket table: one row, whose auto-increment id is the ticket.
-- REPLACE INTO tickets64 (stub) VALUES ('a') deletes and re-inserts that row.
CREATE TABLE IF NOT EXISTS tickets64 (
  id   BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  stub CHAR(1) NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  UNIQUE KEY stub (stub)
) ENGINE=InnoDB;

-- The layout/meta row the service checks at every connect: both servers must
-- agree on layout_version and block_size; parity must match the server's role.
-- block_size (B) is part of the data: changing it on a live pair would create
-- duplicates, so the service refuses a server whose B differs from its partner's.
-- server_uuid names this server (set once at load, 20-*.sql): a server restored
-- from a backup keeps it, a rebuilt one gets a new one; logs tell them apart.
CREATE TABLE IF NOT EXISTS idgen_meta (
  one            TINYINT NOT NULL PRIMARY KEY,
  layout_version INT NOT NULL,
  block_size     BIGINT UNSIGNED NOT NULL,
  parity         ENUM('odd', 'even') NOT NULL,
  server_uuid    CHAR(36) NOT NULL DEFAULT '',
  CONSTRAINT one_row CHECK (one = 1)
) ENGINE=InnoDB;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS server_uuid CHAR(36) NOT NULL DEFAULT '';
-- The tier's shape, checked like block_size (docs/design.md section 12):
-- tier_increment is the tier's auto_increment_increment M (the pair: 2);
-- server_offset this server's offset 1..M for life (0 until 20-*.sql sets it);
-- region and region_bits place it among regions (0 and 0: one region, today).
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS tier_increment INT UNSIGNED NOT NULL DEFAULT 2;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS server_offset INT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS region INT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS region_bits INT UNSIGNED NOT NULL DEFAULT 0;
-- A change of the increment (idgenctl tier raise-increment, docs/design.md 12.4):
-- the tier's generation, the floor every ticket of it is above, and the
-- increment a change in progress moves to (0: none).
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS tier_generation INT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS tier_floor BIGINT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE idgen_meta ADD COLUMN IF NOT EXISTS tier_plan INT UNSIGNED NOT NULL DEFAULT 0;

-- High-water marks, outside the ticket table so that TRUNCATE, DROP or ALTER of
-- tickets64 cannot erase them: the highest ticket ever used per role, and the
-- block size B it was used under (a mark covers every ID below
-- (high_water + 1) * block_size, so a changed B cannot reuse IDs). The row of
-- the server's own role is raised in the same transaction as each ticket (a
-- ticket not above it is refused: the counter moved back); the other row is
-- this server's copy of its partner's mark, which catches a partner restored
-- from an old backup. Never lower these values (docs/design.md section 6).
CREATE TABLE IF NOT EXISTS idgen_marks (
  role       VARCHAR(16) NOT NULL PRIMARY KEY,
  high_water BIGINT UNSIGNED NOT NULL DEFAULT 0,
  block_size BIGINT UNSIGNED NOT NULL DEFAULT 0
) ENGINE=InnoDB;
-- Upgrade of a schema from before block_size (0 = "the server's B"; 20-*.sql
-- records the B of marks already raised).
ALTER TABLE idgen_marks ADD COLUMN IF NOT EXISTS block_size BIGINT UNSIGNED NOT NULL DEFAULT 0;
-- Upgrade of a schema from before a region had more than its pair: a row per
-- server of the region, 'o<offset>' beyond the pair (docs/design.md 12.2;
-- idgenctl tier add-server inserts them).
ALTER TABLE idgen_marks MODIFY role VARCHAR(16) NOT NULL;
-- In the server's own row only: the generation its tickets belong to, and the
-- seal of a change of the increment, read under the lock every ticket takes
-- (docs/design.md 12.4).
ALTER TABLE idgen_marks ADD COLUMN IF NOT EXISTS generation INT UNSIGNED NOT NULL DEFAULT 0;
ALTER TABLE idgen_marks ADD COLUMN IF NOT EXISTS sealed TINYINT UNSIGNED NOT NULL DEFAULT 0;
-- A server retired by idgenctl tier retire-server: its rows stay (its offset is
-- never given again, its mark still binds), flagged on every server.
ALTER TABLE idgen_marks ADD COLUMN IF NOT EXISTS retired TINYINT UNSIGNED NOT NULL DEFAULT 0;
INSERT IGNORE INTO idgen_marks (role) VALUES ('odd'), ('even');

-- Namespaces (docs/design.md section 13; idgenctl ns create): a sequence of its
-- own per name, with its own ticket table tickets_<name> on every server, its
-- B and fallback policy fixed at creation. Rows are 'creating' until every
-- server has the table and marks, then 'ready'; 'dropped' keeps the marks.
-- start_above: the largest existing ID a create was given (a rerun keeps it).
CREATE TABLE IF NOT EXISTS idgen_namespaces (
  name       VARCHAR(48) NOT NULL PRIMARY KEY,
  block_size BIGINT UNSIGNED NOT NULL,
  fallback   ENUM('snowflake', 'refuse') NOT NULL DEFAULT 'snowflake',
  state      ENUM('creating', 'ready', 'dropped') NOT NULL DEFAULT 'creating',
  start_above BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created    TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3)
) ENGINE=InnoDB;
-- A namespace's high-water marks, as idgen_marks for the default sequence: a
-- row per server of the region (role) on every server; used_at is when an
-- idserver last took one of its tickets here (ns drop refuses a recent one).
CREATE TABLE IF NOT EXISTS idgen_ns_marks (
  ns         VARCHAR(48) NOT NULL,
  role       VARCHAR(16) NOT NULL,
  high_water BIGINT UNSIGNED NOT NULL DEFAULT 0,
  block_size BIGINT UNSIGNED NOT NULL DEFAULT 0,
  used_at    TIMESTAMP(3) NULL DEFAULT NULL,
  PRIMARY KEY (ns, role)
) ENGINE=InnoDB;

-- Guards (docs/design.md 6.5): the database itself refuses an edit that lowers a
-- mark, in ID space: (high_water + 1) * block_size never decreases (a block_size
-- of 0 is the server's B, or the namespace's). The ticket transactions, tier
-- add-server and raise-increment only raise marks. A trigger runs as the root
-- that loads this file: the service user needs no right for it. idgenctl tier
-- check reports a server without them.
DELIMITER //
CREATE OR REPLACE TRIGGER idgen_marks_no_lower BEFORE UPDATE ON idgen_marks FOR EACH ROW
BEGIN
  DECLARE b BIGINT UNSIGNED DEFAULT 1;
  IF OLD.block_size = 0 OR NEW.block_size = 0 THEN
    SET b = COALESCE((SELECT block_size FROM idgen_meta WHERE one = 1), 1);
  END IF;
  IF NEW.role <> OLD.role AND OLD.high_water > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark row is never renamed (it would lower the mark; docs/design.md 6.5)';
  END IF;
  IF (CAST(NEW.high_water AS DECIMAL(40, 0)) + 1) * IF(NEW.block_size = 0, b, NEW.block_size) <
     (CAST(OLD.high_water AS DECIMAL(40, 0)) + 1) * IF(OLD.block_size = 0, b, OLD.block_size) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark is never lowered ((high_water + 1) * block_size only rises; docs/design.md 6.5)';
  END IF;
END//
CREATE OR REPLACE TRIGGER idgen_marks_no_delete BEFORE DELETE ON idgen_marks FOR EACH ROW
BEGIN
  IF OLD.high_water > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark row is never deleted (it would lower the mark; docs/design.md 6.5)';
  END IF;
END//
CREATE OR REPLACE TRIGGER idgen_ns_marks_no_lower BEFORE UPDATE ON idgen_ns_marks FOR EACH ROW
BEGIN
  DECLARE b BIGINT UNSIGNED DEFAULT 1;
  IF OLD.block_size = 0 OR NEW.block_size = 0 THEN
    SET b = COALESCE((SELECT block_size FROM idgen_namespaces WHERE name = OLD.ns), 1);
  END IF;
  IF (NEW.ns <> OLD.ns OR NEW.role <> OLD.role) AND OLD.high_water > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark row is never renamed (it would lower the mark; docs/design.md 6.5)';
  END IF;
  IF (CAST(NEW.high_water AS DECIMAL(40, 0)) + 1) * IF(NEW.block_size = 0, b, NEW.block_size) <
     (CAST(OLD.high_water AS DECIMAL(40, 0)) + 1) * IF(OLD.block_size = 0, b, OLD.block_size) THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark is never lowered ((high_water + 1) * block_size only rises; docs/design.md 6.5)';
  END IF;
END//
CREATE OR REPLACE TRIGGER idgen_ns_marks_no_delete BEFORE DELETE ON idgen_ns_marks FOR EACH ROW
BEGIN
  IF OLD.high_water > 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
      'idgen: a mark row is never deleted (it would lower the mark; docs/design.md 6.5)';
  END IF;
END//
DELIMITER ;
