-- The even server owns the even worker numbers 0, 2, ..., 1022.
INSERT IGNORE INTO idgen.idgen_leases (worker)
WITH RECURSIVE w (n) AS (SELECT 0 UNION ALL SELECT n + 2 FROM w WHERE n < 1022)
SELECT n FROM w;
