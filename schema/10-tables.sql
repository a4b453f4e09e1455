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
CREATE TABLE IF NOT EXISTS idgen_meta (
  one            TINYINT NOT NULL PRIMARY KEY,
  layout_version INT NOT NULL,
  block_size     BIGINT UNSIGNED NOT NULL,
  parity         ENUM('odd', 'even') NOT NULL,
  CONSTRAINT one_row CHECK (one = 1)
) ENGINE=InnoDB;
