-- The ClickHouse peer of `convbatch extract --tables usage` (bench/run.sh,
-- CASES=perf: perf-chdbusage-SIZE): the usage table of
-- bench/chdb_extract.sql, every column of it, alone, reading only the
-- fields it needs (convbatch's usage-only extract computes no transcript
-- hash either). {{input}} and {{out}} are absolute paths, filled in by
-- bench/chdb.mjs.

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
  coalesce(parseDateTime64BestEffortOrNull(m.createdAt, 3, 'UTC'), parseDateTime64BestEffortOrNull(d.createdAt, 3, 'UTC')) AS created_at,
  d._file AS source_file
FROM file('{{input}}', 'JSONEachRow',
  'id String, createdAt Nullable(String), agentId Nullable(String),
   messages Array(Tuple(id Nullable(String), role String, agentId Nullable(String), provider Nullable(String),
     tokens Map(String, Int64), cost Nullable(Float64), createdAt Nullable(String)))') AS d
ARRAY JOIN d.messages AS m, arrayEnumerate(d.messages) AS i
WHERE notEmpty(m.tokens) OR m.cost IS NOT NULL OR m.provider IS NOT NULL
SETTINGS input_format_skip_unknown_fields = 1,
  input_format_json_read_objects_as_strings = 1, input_format_json_read_arrays_as_strings = 1,
  input_format_json_read_numbers_as_strings = 1, input_format_json_read_bools_as_strings = 1,
  input_format_json_defaults_for_missing_elements_in_named_tuple = 1,
  input_format_max_bytes_to_read_for_schema_inference = 0,
  max_insert_block_size = 65536,
  storage_file_read_method = 'pread',
  output_format_parquet_compression_method = 'zstd', engine_file_truncate_on_insert = 1;

SELECT 'rows', (SELECT count() FROM file('{{out}}/usage.parquet', 'Parquet')), 0;
