-- The ClickHouse peer of `convbatch extract --tables usage,conversations`
-- (bench/run.sh runs it with `node bench/chdb.mjs`, chDB embedded in Node;
-- {{input}} and {{out}} are filled in, absolute paths). It writes the same
-- two tables as bench/duckdb_extract.sql, as zstd Parquet, from one read of
-- the archive with an explicit schema (plain .jsonl, or .jsonl.zst: ClickHouse
-- decompresses by extension):
--   usage: one row per message carrying tokens, cost or provider;
--   conversations: one row per document with its totals, image count and
--     decoded size, tool calls, orphan tool results and whether a receipt is
--     present.
-- As for DuckDB, not done here: the strict parse and reject accounting, the
-- transcript hash, the receipt checks, source line numbers. Differences from
-- DuckDB's tables, which bench/peer_compare.sql leaves out (it compares the
-- key columns with convbatch's, EXCEPT ALL both ways): an absent
-- extensions or skillIds is an empty array (ClickHouse has no nullable
-- arrays), an absent tokens an empty map, and times are parsed with
-- parseDateTime64BestEffortOrNull.
-- {{transcript}} is NULL for the peer of convbatch's tables as measured
-- (ClickHouse computes no transcript hash: transcript_sha256 is all null),
-- or an expression per document for a like-for-like case: bench/run.sh's
-- tiny-chdbhash-N passes the SHA-256 of the document re-serialized
-- (toJSONString of every field read), so that ClickHouse also parses,
-- writes back and hashes each document, as convbatch's transcript hash
-- does with the RFC 8785 form (not the same bytes, so not the same hash).
-- The archive is read once into a Memory table holding every document
-- without the message contents (only what the two tables need), then each
-- table is written from it, as duckdb_extract.sql does. The other plan, a
-- view read once per table, took 3.98 s against 3.79 s on 1M tiny documents
-- here (one run each, same CPU time, peak RSS 861 against 913 MiB).

CREATE TABLE docs ENGINE = Memory AS
SELECT
  rowNumberInAllBlocks() AS doc,
  id, title, parseDateTime64BestEffortOrNull(createdAt, 3, 'UTC') AS created_at, extensions,
  agentId, skillIds, swarmRole, leaderId,
  consensusReceipt IS NOT NULL AS has_receipt,
  CAST({{transcript}} AS Nullable(String)) AS transcript,
  _file AS filename,
  arrayMap(m -> CAST(tuple(
      m.id, m.role, m.agentId, m.provider, m.tokens, m.cost,
      parseDateTime64BestEffortOrNull(m.createdAt, 3, 'UTC'),
      -- images-inline: a data:image/ string holding ;base64, or kind "image"
      m.kind = 'image' OR (startsWith(m.content, 'data:image/') AND position(m.content, ';base64,') > 0),
      multiIf(startsWith(m.content, 'data:image/') AND position(m.content, ';base64,') > 0,
                substring(m.content, position(m.content, ';base64,') + 8),
              m.kind = 'image', m.content, NULL),
      arrayMap(c -> c.id, m.toolCalls),
      m.toolCallId),
    'Tuple(id Nullable(String), role String, agentId Nullable(String), provider Nullable(String), tokens Map(String, Int64), cost Nullable(Float64), createdAt Nullable(DateTime64(3, \'UTC\')), image Nullable(Bool), payload Nullable(String), callIds Array(Nullable(String)), toolCallId Nullable(String))'),
    messages) AS msgs
FROM file('{{input}}', 'JSONEachRow',
  'id String, title Nullable(String), createdAt Nullable(String), extensions Array(String),
   agentId Nullable(String), skillIds Array(String), swarmRole Nullable(String), leaderId Nullable(String),
   consensusReceipt Nullable(String),
   messages Array(Tuple(id Nullable(String), role String, kind Nullable(String), content Nullable(String),
     agentId Nullable(String), provider Nullable(String), tokens Map(String, Int64), cost Nullable(Float64),
     createdAt Nullable(String), toolCalls Array(Tuple(id Nullable(String))), toolCallId Nullable(String)))')
SETTINGS input_format_skip_unknown_fields = 1,
  input_format_json_read_objects_as_strings = 1, input_format_json_read_arrays_as_strings = 1,
  input_format_json_read_numbers_as_strings = 1, input_format_json_read_bools_as_strings = 1,
  input_format_json_defaults_for_missing_elements_in_named_tuple = 1,
  input_format_max_bytes_to_read_for_schema_inference = 0,
  -- For {{transcript}}: absent fields are left out of toJSONString, as
  -- they are absent from the document (282 bytes against the line's 237
  -- for the first tiny document; 380 with them written as null).
  output_format_json_skip_null_value_in_named_tuples = 1,
  max_insert_block_size = 65536,
  -- read() instead of mmap: the same time, and the mapped file's pages do
  -- not count in the peak RSS (670 against 485 MiB on 256 MiB plain).
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
  m.tokens AS tokens,
  m.cost AS cost,
  coalesce(m.createdAt, d.created_at) AS created_at,
  d.filename AS source_file
FROM docs AS d
ARRAY JOIN d.msgs AS m, arrayEnumerate(d.msgs) AS i
WHERE notEmpty(m.tokens) OR m.cost IS NOT NULL OR m.provider IS NOT NULL
SETTINGS output_format_parquet_compression_method = 'zstd', engine_file_truncate_on_insert = 1;

INSERT INTO FUNCTION file('{{out}}/conversations.parquet', 'Parquet')
SELECT
  id AS conversation_id, title, created_at, extensions,
  toInt32(length(msgs)) AS message_count,
  agentId AS agent_id, skillIds AS skill_ids, swarmRole AS swarm_role, leaderId AS leader_id,
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
  has_receipt,
  transcript AS transcript_sha256,
  filename AS source_file
FROM docs AS d
-- A tool result whose toolCallId is no call id of an earlier message: each
-- result joined to the first message of its document that made its call
-- (0 when none did). Comparing each result with the calls of the messages
-- before it inside one array expression (arrayFlatten of arraySlice) copies
-- those arrays once per message: 1.3 GB peak on a 64 MiB archive, 17 GB on
-- 1 GiB, against about 0.4 GB this way.
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
