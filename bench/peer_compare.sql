-- Checks a peer's tables ({{pe}}/usage.parquet and conversations.parquet,
-- written by bench/chdb_extract.sql or bench/polars.mjs) against
-- convbatch's (`convbatch extract --tables usage,conversations`, in {{cb}}),
-- run in DuckDB: row counts of both, and the rows of each that the other
-- lacks (EXCEPT ALL both ways) over the key columns every peer computes the
-- same way (costs rounded: sums in another order differ in the last bits).
-- Left out, as the peers type them otherwise: times, the tokens map, the
-- extensions and skill-id arrays, and source_file. Prints one line:
--   counts  usage_convbatch  usage_peer  conv_convbatch  conv_peer  usage_diff  conv_diff
CREATE VIEW cu AS SELECT * FROM read_parquet('{{cb}}/usage/*.parquet');
CREATE VIEW pu AS SELECT * FROM read_parquet('{{pe}}/usage.parquet');
CREATE VIEW cc AS SELECT * FROM read_parquet('{{cb}}/conversations/*.parquet');
CREATE VIEW pc AS SELECT * FROM read_parquet('{{pe}}/conversations.parquet');
CREATE MACRO ucols(t) AS TABLE
  SELECT conversation_id::VARCHAR AS conversation_id, message_index::INTEGER AS message_index,
         message_id::VARCHAR AS message_id, role::VARCHAR AS role, agent_id::VARCHAR AS agent_id,
         provider::VARCHAR AS provider, tokens_input::BIGINT AS tokens_input,
         tokens_output::BIGINT AS tokens_output, round(cost, 9) AS cost
  FROM query_table(t);
CREATE MACRO ccols(t) AS TABLE
  SELECT conversation_id::VARCHAR AS conversation_id, title::VARCHAR AS title,
         message_count::INTEGER AS message_count, agent_id::VARCHAR AS agent_id,
         swarm_role::VARCHAR AS swarm_role, leader_id::VARCHAR AS leader_id,
         tokens_input_total::BIGINT AS tokens_input_total, tokens_output_total::BIGINT AS tokens_output_total,
         round(cost_total, 6) AS cost_total, image_count::INTEGER AS image_count,
         image_bytes::BIGINT AS image_bytes, tool_call_count::INTEGER AS tool_call_count,
         tool_result_orphans::INTEGER AS tool_result_orphans, has_receipt::BOOLEAN AS has_receipt
  FROM query_table(t);
SELECT 'counts',
  (SELECT count(*) FROM cu), (SELECT count(*) FROM pu),
  (SELECT count(*) FROM cc), (SELECT count(*) FROM pc),
  (SELECT count(*) FROM (FROM ucols(cu) EXCEPT ALL FROM ucols(pu))) + (SELECT count(*) FROM (FROM ucols(pu) EXCEPT ALL FROM ucols(cu))),
  (SELECT count(*) FROM (FROM ccols(cc) EXCEPT ALL FROM ccols(pc))) + (SELECT count(*) FROM (FROM ccols(pc) EXCEPT ALL FROM ccols(cc)));
