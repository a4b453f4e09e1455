-- Meta row of the even ticket server (auto_increment_offset = 2): B = 65536.
INSERT IGNORE INTO idgen.idgen_meta (one, layout_version, block_size, parity)
VALUES (1, 1, 65536, 'even');
