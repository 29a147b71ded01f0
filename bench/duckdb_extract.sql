-- The DuckDB peer of `convbatch extract --tables usage,conversations`
-- (bench/run.sh runs it with `node bench/duckdb.mjs`; {{input}} and {{out}}
-- are filled in). It writes the same two tables as zstd Parquet, from one
-- JSON read of the archive (plain .jsonl or .jsonl.zst: DuckDB decompresses
-- by extension):
--   usage: one row per message carrying tokens, cost or provider, with its
--     index, id, role, agent (the message's, else the conversation's),
--     provider, input/output tokens, every counter (a MAP), cost and time
--     (the message's, else the conversation's);
--   conversations: one row per document with title, time, extensions,
--     agent-context fields, message count, token and cost totals, inline
--     image count and decoded size (from the base64 length and padding),
--     tool-call count, tool results answering no earlier call, and whether a
--     receipt is present.
-- Not done here, and done by convbatch in the same run: the document checks
-- (strict RFC 8259 parse with duplicate keys and UTF-8 checked, reject
-- accounting), the transcript hash (SHA-256 of the RFC 8785 form) and the
-- receipt signature checks, and source line numbers (DuckDB's reader has no
-- line number; the file name is kept).
-- The archive is read once into a temporary table holding every document
-- without the message contents (only what the two tables need), then each
-- table is written from it. The other plan, a view and one COPY per table
-- (the JSON read twice), took about 1.4x the CPU time here (and about 2/3 of
-- the peak RSS).

-- RFC 3339 times (t and z in either case; second 60 is the next second)
CREATE TEMP MACRO rfc3339(s) AS
  try_cast(replace(upper(s), ':60', ':59') AS TIMESTAMPTZ)
  + CASE WHEN contains(s, ':60') THEN INTERVAL 1 SECOND ELSE INTERVAL 0 SECOND END;

CREATE TEMP TABLE docs AS
SELECT
  id, title, rfc3339(createdAt) AS createdAt, extensions, agentId, skillIds, swarmRole, leaderId,
  consensusReceipt IS NOT NULL AS has_receipt,
  filename,
  list_transform(messages, lambda m: struct_pack(
    id := m.id, role := m.role, agentId := m.agentId, provider := m.provider,
    tokens := m.tokens, cost := m.cost, createdAt := rfc3339(m.createdAt),
    -- images-inline: a string content starting data:image/ and holding
    -- ;base64, or kind "image" (then the whole string is the payload)
    image := m.kind = 'image'
             OR (json_type(m.content) = 'VARCHAR'
                 AND (starts_with(m.content::VARCHAR, '"data:image/') OR starts_with(m.content::VARCHAR, '"data:image\/'))
                 AND contains(m.content::VARCHAR, ';base64,')),
    payload := CASE
      WHEN json_type(m.content) <> 'VARCHAR' THEN NULL
      WHEN NOT (starts_with(m.content::VARCHAR, '"data:image/') OR starts_with(m.content::VARCHAR, '"data:image\/') OR m.kind = 'image') THEN NULL
      WHEN starts_with(m.content->>'$', 'data:image/') AND contains(m.content->>'$', ';base64,')
        THEN split_part(m.content->>'$', ';base64,', 2)
      ELSE m.content->>'$' END,
    callIds := list_transform(m.toolCalls, lambda c: c.id),
    toolCallId := m.toolCallId)) AS msgs
FROM read_json('{{input}}',
  format = 'newline_delimited',
  maximum_object_size = 67108864,
  filename = true,
  columns = {
    id: 'VARCHAR', title: 'VARCHAR', createdAt: 'VARCHAR', extensions: 'VARCHAR[]',
    agentId: 'VARCHAR', skillIds: 'VARCHAR[]', swarmRole: 'VARCHAR', leaderId: 'VARCHAR',
    consensusReceipt: 'JSON',
    messages: 'STRUCT(id VARCHAR, role VARCHAR, kind VARCHAR, content JSON, agentId VARCHAR, provider VARCHAR, tokens MAP(VARCHAR, BIGINT), cost DOUBLE, createdAt VARCHAR, toolCalls STRUCT(id VARCHAR)[], toolCallId VARCHAR)[]'
  });

COPY (
  SELECT
    d.id AS conversation_id,
    (u.i - 1)::INTEGER AS message_index,
    u.m.id AS message_id,
    u.m.role AS role,
    coalesce(u.m.agentId, d.agentId) AS agent_id,
    u.m.provider AS provider,
    u.m.tokens['input'] AS tokens_input,
    u.m.tokens['output'] AS tokens_output,
    u.m.tokens AS tokens,
    u.m.cost AS cost,
    coalesce(u.m.createdAt, d.createdAt) AS created_at,
    d.filename AS source_file
  FROM docs d, unnest(d.msgs) WITH ORDINALITY AS u(m, i)
  WHERE u.m.tokens IS NOT NULL OR u.m.cost IS NOT NULL OR u.m.provider IS NOT NULL
) TO '{{out}}/usage.parquet' (FORMAT parquet, COMPRESSION zstd);

COPY (
  SELECT
    id AS conversation_id, title, createdAt AS created_at, extensions,
    len(msgs)::INTEGER AS message_count,
    agentId AS agent_id, skillIds AS skill_ids, swarmRole AS swarm_role, leaderId AS leader_id,
    coalesce(list_sum(list_transform(msgs, lambda m: m.tokens['input'])), 0) AS tokens_input_total,
    coalesce(list_sum(list_transform(msgs, lambda m: m.tokens['output'])), 0) AS tokens_output_total,
    coalesce(list_sum(list_transform(msgs, lambda m: m.cost)), 0) AS cost_total,
    len(list_filter(msgs, lambda m: m.image))::INTEGER AS image_count,
    coalesce(list_sum(list_transform(list_filter(msgs, lambda m: m.image), lambda m:
      CASE WHEN strlen(m.payload) % 4 = 0
        THEN strlen(m.payload) // 4 * 3 - (CASE WHEN ends_with(m.payload, '==') THEN 2 WHEN ends_with(m.payload, '=') THEN 1 ELSE 0 END)
        ELSE strlen(m.payload) // 4 * 3 + greatest(strlen(m.payload) % 4 - 1, 0) END)), 0) AS image_bytes,
    coalesce(list_sum(list_transform(msgs, lambda m: len(m.callIds))), 0)::INTEGER AS tool_call_count,
    -- a tool result whose toolCallId is no call id of an earlier message
    len(list_filter(list_transform(msgs, lambda m, i:
      m.toolCallId IS NOT NULL AND NOT list_contains(flatten(list_transform(msgs[1:i-1], lambda p: coalesce(p.callIds, []))), m.toolCallId)),
      lambda x: x))::INTEGER AS tool_result_orphans,
    has_receipt,
    filename AS source_file
  FROM docs
) TO '{{out}}/conversations.parquet' (FORMAT parquet, COMPRESSION zstd);

SELECT 'rows', (SELECT count(*) FROM '{{out}}/usage.parquet'), (SELECT count(*) FROM '{{out}}/conversations.parquet');
