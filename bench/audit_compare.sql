-- audit_compare.sql: the verdicts of the full rerun ({{full}}, one run)
-- against the audited OUT's current verdicts ({{audited}}: the latest row per
-- receipt, as docs/TABLES.md says), receipt for receipt. Prints: receipts of
-- the full rerun, receipts of the audited OUT, equal, differing, and the
-- first few differing (file:line full/audited).
CREATE TABLE full_rerun AS
  SELECT source_file, source_line, status, list_sort(reasons) AS reasons
  FROM read_parquet('{{full}}/tables/receipts/**/*.parquet');
CREATE TABLE audited AS
  SELECT source_file, source_line, status, list_sort(reasons) AS reasons
  FROM read_parquet('{{audited}}/tables/receipts/**/*.parquet', filename = true)
  QUALIFY row_number() OVER (PARTITION BY source_file, source_line
                             ORDER BY regexp_extract(filename, '[^/]*$') DESC) = 1;
CREATE TABLE diff AS
  SELECT coalesce(f.source_file, a.source_file) AS source_file, coalesce(f.source_line, a.source_line) AS source_line,
         f.status AS full_status, f.reasons AS full_reasons, a.status AS audited_status, a.reasons AS audited_reasons
  FROM full_rerun f FULL JOIN audited a USING (source_file, source_line)
  WHERE f.status IS DISTINCT FROM a.status OR f.reasons IS DISTINCT FROM a.reasons;
SELECT (SELECT count(*) FROM full_rerun), (SELECT count(*) FROM audited),
       (SELECT count(*) FROM full_rerun) - (SELECT count(*) FROM diff WHERE full_status IS NOT NULL),
       (SELECT count(*) FROM diff),
       coalesce((SELECT string_agg(source_file || ':' || source_line || ' ' || coalesce(full_status, '-') || '/' || coalesce(audited_status, '-'), '; ')
                 FROM (SELECT * FROM diff ORDER BY source_file, source_line LIMIT 5)), 'none');
