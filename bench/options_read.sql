-- A reader of the writer options' sweep (bench/options-sweep.sh, issue 46
-- item 2): DuckDB over one variant's usage and conversations tables
-- ({{dir}}/NAME/), a nightly-style query (usage by provider, role
-- and day) and a scan that decodes every column of both tables.
SELECT provider, role, date_trunc('day', created_at) AS day, count(*) AS n,
       sum(tokens_input) AS tin, sum(tokens_output) AS tout, sum(cost) AS cost
FROM read_parquet('{{dir}}/usage/*.parquet')
GROUP BY ALL ORDER BY ALL;
SELECT sum(hash(COLUMNS(*))) FROM read_parquet('{{dir}}/usage/*.parquet');
SELECT sum(hash(COLUMNS(*))) FROM read_parquet('{{dir}}/conversations/*.parquet');
