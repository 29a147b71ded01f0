-- The lighter ClickHouse peer of `convbatch extract --tables
-- usage,conversations` (bench/run.sh, CASES=perf: perf-chdblight-SIZE):
-- bench/chdb_extract.sql cut to the columns that both compute and that
-- bench/peer_compare.sql compares (its ucols and ccols), so ClickHouse
-- reads, keeps and writes nothing else: no times, no tokens map, no
-- extensions or skill ids, no source file, no transcript column. Both tables
-- as zstd Parquet from one read of the archive into a Memory table, the
-- orphan tool results by the same join. {{input}} and {{out}} are absolute
-- paths, filled in by bench/chdb.mjs.

CREATE TABLE docs ENGINE = Memory AS
SELECT
  rowNumberInAllBlocks() AS doc,
  id, title, agentId, swarmRole, leaderId,
  consensusReceipt IS NOT NULL AS has_receipt,
  arrayMap(m -> CAST(tuple(
      m.id, m.role, m.agentId, m.provider, m.tokens, m.cost,
      m.kind = 'image' OR (startsWith(m.content, 'data:image/') AND position(m.content, ';base64,') > 0),
      multiIf(startsWith(m.content, 'data:image/') AND position(m.content, ';base64,') > 0,
                substring(m.content, position(m.content, ';base64,') + 8),
              m.kind = 'image', m.content, NULL),
      arrayMap(c -> c.id, m.toolCalls),
      m.toolCallId),
    'Tuple(id Nullable(String), role String, agentId Nullable(String), provider Nullable(String), tokens Map(String, Int64), cost Nullable(Float64), image Nullable(Bool), payload Nullable(String), callIds Array(Nullable(String)), toolCallId Nullable(String))'),
    messages) AS msgs
FROM file('{{input}}', 'JSONEachRow',
  'id String, title Nullable(String), agentId Nullable(String), swarmRole Nullable(String), leaderId Nullable(String),
   consensusReceipt Nullable(String),
   messages Array(Tuple(id Nullable(String), role String, kind Nullable(String), content Nullable(String),
     agentId Nullable(String), provider Nullable(String), tokens Map(String, Int64), cost Nullable(Float64),
     toolCalls Array(Tuple(id Nullable(String))), toolCallId Nullable(String)))')
SETTINGS input_format_skip_unknown_fields = 1,
  input_format_json_read_objects_as_strings = 1, input_format_json_read_arrays_as_strings = 1,
  input_format_json_read_numbers_as_strings = 1, input_format_json_read_bools_as_strings = 1,
  input_format_json_defaults_for_missing_elements_in_named_tuple = 1,
  input_format_max_bytes_to_read_for_schema_inference = 0,
  max_insert_block_size = 65536,
  storage_file_read_method = 'pread';

INSERT INTO FUNCTION file('{{out}}/usage.parquet', 'Parquet')
SELECT
  d.id AS conversation_id,
  toInt32(i - 1) AS message_index,
  m.id AS message_id,
  m.role AS role,
  coalesce(m.agentId, d.agentId) AS agent_id,
  m.provider AS provider,
  if(mapContains(m.tokens, 'input'), m.tokens['input'], NULL) AS tokens_input,
  if(mapContains(m.tokens, 'output'), m.tokens['output'], NULL) AS tokens_output,
  m.cost AS cost
FROM docs AS d
ARRAY JOIN d.msgs AS m, arrayEnumerate(d.msgs) AS i
WHERE notEmpty(m.tokens) OR m.cost IS NOT NULL OR m.provider IS NOT NULL
SETTINGS output_format_parquet_compression_method = 'zstd', engine_file_truncate_on_insert = 1;

INSERT INTO FUNCTION file('{{out}}/conversations.parquet', 'Parquet')
SELECT
  id AS conversation_id, title,
  toInt32(length(msgs)) AS message_count,
  agentId AS agent_id, swarmRole AS swarm_role, leaderId AS leader_id,
  arraySum(m -> m.tokens['input'], msgs) AS tokens_input_total,
  arraySum(m -> m.tokens['output'], msgs) AS tokens_output_total,
  arraySum(m -> ifNull(m.cost, 0), msgs) AS cost_total,
  toInt32(arrayCount(m -> ifNull(m.image, false), msgs)) AS image_count,
  arraySum(m -> toInt64(ifNull(if(ifNull(m.image, false),
    if(length(m.payload) % 4 = 0,
       intDiv(length(m.payload), 4) * 3 - multiIf(endsWith(m.payload, '=='), 2, endsWith(m.payload, '='), 1, 0),
       intDiv(length(m.payload), 4) * 3 + greatest(toInt64(length(m.payload) % 4) - 1, 0)), 0), 0)), msgs) AS image_bytes,
  toInt32(arraySum(m -> length(m.callIds), msgs)) AS tool_call_count,
  toInt32(o.orphans) AS tool_result_orphans,
  has_receipt
FROM docs AS d
LEFT JOIN (
  SELECT r.doc AS doc, countIf(c.first = 0 OR c.first >= r.i) AS orphans
  FROM (SELECT doc, m.toolCallId AS id, i FROM docs
        ARRAY JOIN msgs AS m, arrayEnumerate(msgs) AS i WHERE m.toolCallId IS NOT NULL) AS r
  LEFT JOIN (SELECT doc, c AS id, min(i) AS first FROM docs
             ARRAY JOIN msgs AS m, arrayEnumerate(msgs) AS i ARRAY JOIN m.callIds AS c
             WHERE c IS NOT NULL GROUP BY doc, id) AS c
  ON r.doc = c.doc AND r.id = c.id
  GROUP BY r.doc) AS o ON d.doc = o.doc
ORDER BY d.doc
SETTINGS output_format_parquet_compression_method = 'zstd', engine_file_truncate_on_insert = 1;

SELECT 'rows',
  (SELECT count() FROM file('{{out}}/usage.parquet', 'Parquet')),
  (SELECT count() FROM file('{{out}}/conversations.parquet', 'Parquet'));
