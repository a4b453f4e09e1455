-- Meta row of the even ticket server (auto_increment_offset = 2): B = 1048576 (2^20).
INSERT IGNORE INTO idgen.idgen_meta (one, layout_version, block_size, parity)
VALUES (1, 1, 1048576, 'even');
UPDATE idgen.idgen_meta SET server_uuid = UUID() WHERE server_uuid = '';
-- Its offset in the tier, for life (a schema loaded before the column existed gets it here).
UPDATE idgen.idgen_meta SET server_offset = 2 WHERE server_offset = 0;
-- Marks raised before they recorded B were raised under this server's B.
UPDATE idgen.idgen_marks SET block_size = (SELECT block_size FROM idgen.idgen_meta WHERE one = 1)
WHERE block_size = 0 AND high_water > 0;
