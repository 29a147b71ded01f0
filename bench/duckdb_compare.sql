-- Checks DuckDB's tables (bench/duckdb_extract.sql, in {{dd}}) against
-- convbatch's (`convbatch extract --tables usage,conversations`, in {{cb}}):
-- row counts of both, and the rows of each that the other lacks, over every
-- column both compute (costs rounded: sums in another order differ in the
-- last bits). Prints one line:
--   counts  usage_convbatch  usage_duckdb  conv_convbatch  conv_duckdb  usage_diff  conv_diff
CREATE VIEW cu AS SELECT * FROM read_parquet('{{cb}}/usage/*.parquet');
CREATE VIEW du AS SELECT * FROM read_parquet('{{dd}}/usage.parquet');
CREATE VIEW cc AS SELECT * FROM read_parquet('{{cb}}/conversations/*.parquet');
CREATE VIEW dc AS SELECT * FROM read_parquet('{{dd}}/conversations.parquet');
CREATE MACRO ucols(t) AS TABLE
  SELECT conversation_id, message_index, message_id, role, agent_id, provider,
         tokens_input, tokens_output, tokens, round(cost, 9) AS cost, created_at
  FROM query_table(t);
CREATE MACRO ccols(t) AS TABLE
  SELECT conversation_id, title, created_at, extensions, message_count, agent_id, skill_ids,
         swarm_role, leader_id, tokens_input_total, tokens_output_total, round(cost_total, 6) AS cost_total,
         image_count, image_bytes, tool_call_count, tool_result_orphans, has_receipt
  FROM query_table(t);
SELECT 'counts',
  (SELECT count(*) FROM cu), (SELECT count(*) FROM du),
  (SELECT count(*) FROM cc), (SELECT count(*) FROM dc),
  (SELECT count(*) FROM (FROM ucols(cu) EXCEPT ALL FROM ucols(du))) + (SELECT count(*) FROM (FROM ucols(du) EXCEPT ALL FROM ucols(cu))),
  (SELECT count(*) FROM (FROM ccols(cc) EXCEPT ALL FROM ccols(dc))) + (SELECT count(*) FROM (FROM ccols(dc) EXCEPT ALL FROM ccols(cc)));
