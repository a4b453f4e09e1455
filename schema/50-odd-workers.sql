-- The odd server owns the odd worker numbers 1, 3, ..., 1023.
INSERT IGNORE INTO idgen.idgen_leases (worker)
WITH RECURSIVE w (n) AS (SELECT 1 UNION ALL SELECT n + 2 FROM w WHERE n < 1023)
SELECT n FROM w;
