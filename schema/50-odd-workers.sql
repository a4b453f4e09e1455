-- The odd server owns the odd worker numbers 1, 3, ..., 1023 of its region
-- (all of them in a tier of one region: region_bits = 0).
INSERT IGNORE INTO idgen.idgen_leases (worker)
WITH RECURSIVE w (n) AS (SELECT 1 UNION ALL SELECT n + 2 FROM w WHERE n < 1023)
SELECT n FROM w, idgen.idgen_meta m WHERE m.one = 1 AND n >> (10 - m.region_bits) = m.region;
