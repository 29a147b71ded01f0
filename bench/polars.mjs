// polars.mjs is the Polars peer of `convbatch extract --tables
// usage,conversations` (the npm package nodejs-polars, pinned to 0.25.2;
// bench/run.sh installs it into bench/data/polars): it writes the same two
// tables as bench/duckdb_extract.sql, as zstd Parquet, from one read of a
// plain JSONL archive with an explicit schema (nodejs-polars has no zstd
// reader).
//
//   node bench/polars.mjs input=FILE out=DIR
//   node bench/polars.mjs --version
//
// The archive is scanned once into one eager frame of messages (the message
// contents reduced to what the tables need: image or not, the base64
// payload's length and padding), each row carrying its document's fields;
// the usage table is its filtered projection, the conversations table its
// aggregate by document. Tool results answering no earlier call are found
// by joining each result to the first message that made its call. Not done,
// as for DuckDB: the strict parse and reject accounting, the transcript
// hash, the receipt checks, source line numbers. Differences from DuckDB's
// tables: times are kept as the strings the archive has; tokens holds only
// input and output (Polars has no map type); a message of kind "image"
// whose content is not a string counts the bytes of that content's JSON
// text (Polars turns a non-string value read as a string into its JSON
// text). It prints `rows USAGE CONVERSATIONS`, tab-separated.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.POLARS_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const pl = require('nodejs-polars');

const args = process.argv.slice(2);
if (args[0] === '--version') {
  console.log(require('nodejs-polars/package.json').version);
  process.exit(0);
}
const opt = Object.fromEntries(args.map((kv) => {
  const i = kv.indexOf('=');
  if (i < 0) {
    process.stderr.write(`polars.mjs: not NAME=VALUE: ${kv}\n`);
    process.exit(2);
  }
  return [kv.slice(0, i), kv.slice(i + 1)];
}));
if (!opt.input || !opt.out) {
  process.stderr.write('usage: node bench/polars.mjs input=FILE out=DIR\n');
  process.exit(2);
}

const F = (name, type) => new pl.Field(name, type);
const schema = {
  id: pl.Utf8, title: pl.Utf8, createdAt: pl.Utf8, extensions: pl.List(pl.Utf8),
  agentId: pl.Utf8, skillIds: pl.List(pl.Utf8), swarmRole: pl.Utf8, leaderId: pl.Utf8,
  consensusReceipt: pl.Utf8,
  messages: pl.List(pl.Struct([
    F('id', pl.Utf8), F('role', pl.Utf8), F('kind', pl.Utf8), F('content', pl.Utf8),
    F('agentId', pl.Utf8), F('provider', pl.Utf8),
    F('tokens', pl.Struct([F('input', pl.Int64), F('output', pl.Int64)])),
    F('cost', pl.Float64), F('createdAt', pl.Utf8),
    F('toolCalls', pl.List(pl.Struct([F('id', pl.Utf8)]))), F('toolCallId', pl.Utf8),
  ])),
};
const col = pl.col;
const m = (f) => col('m').struct.field(f);
const content = m('content');
const dataImage = content.str.startsWith('data:image/').and(content.str.contains(';base64,', true));
const payload = pl.when(dataImage).then(content.str.split(';base64,').lst.get(1))
  .when(m('kind').eq(pl.lit('image'))).then(content)
  .otherwise(pl.lit(null, pl.Utf8));

const msgs = pl.scanJson(opt.input, { schema, includeFilePaths: 'source_file' })
  .withRowIndex('doc')
  .select(
    col('doc'), col('id'), col('title'), col('createdAt'), col('extensions'), col('agentId'),
    col('skillIds'), col('swarmRole'), col('leaderId'),
    col('consensusReceipt').isNotNull().alias('has_receipt'), col('source_file'),
    col('messages').alias('m'))
  .explode('m')
  .withRowIndex('row')
  .select(
    pl.exclude('m'),
    col('m').isNotNull().alias('has_msg'),
    col('row').sub(col('row').min().over('doc')).cast(pl.Int32).alias('message_index'),
    m('id').alias('m_id'), m('role').alias('role'), m('agentId').alias('m_agent'),
    m('provider').alias('provider'), m('tokens').alias('tokens'),
    m('tokens').struct.field('input').alias('tokens_input'),
    m('tokens').struct.field('output').alias('tokens_output'),
    m('cost').alias('cost'), m('createdAt').alias('m_created'),
    m('kind').eq(pl.lit('image')).fillNull(false).or(dataImage.fillNull(false)).alias('image'),
    payload.str.lengths().alias('plen'),
    pl.when(payload.str.endsWith('==')).then(pl.lit(2)).when(payload.str.endsWith('=')).then(pl.lit(1)).otherwise(pl.lit(0)).alias('ppad'),
    m('toolCalls').lst.lengths().fillNull(0).alias('ncalls'),
    m('toolCalls').alias('calls'),
    m('toolCallId').alias('tool_call_id'))
  .collectSync();

// The first message of each document that made each call.
const firstCall = msgs.lazy()
  .select(col('doc'), col('message_index').alias('call_index'), col('calls'))
  .explode('calls')
  .select(col('doc'), col('call_index'), col('calls').struct.field('id').alias('tool_call_id'))
  .filter(col('tool_call_id').isNotNull())
  .groupBy(['doc', 'tool_call_id']).agg(col('call_index').min());

const usage = msgs.lazy()
  .filter(col('has_msg').and(col('tokens').isNotNull().or(col('cost').isNotNull()).or(col('provider').isNotNull())))
  .select(
    col('id').alias('conversation_id'), col('message_index'), col('m_id').alias('message_id'), col('role'),
    col('m_agent').fillNull(col('agentId')).alias('agent_id'), col('provider'),
    col('tokens_input'), col('tokens_output'), col('tokens'), col('cost'),
    col('m_created').fillNull(col('createdAt')).alias('created_at'), col('source_file'))
  .collectSync();
usage.writeParquet(`${opt.out}/usage.parquet`, { compression: 'zstd' });

const l = col('plen').cast(pl.Int64);
const q3 = l.sub(l.modulo(4)).div(pl.lit(4)).cast(pl.Int64).mul(pl.lit(3));
const decoded = pl.when(l.modulo(4).eq(0))
  .then(q3.sub(col('ppad')))
  .otherwise(q3.add(pl.when(l.modulo(4).gt(1)).then(l.modulo(4).sub(1)).otherwise(pl.lit(0))));
const conversations = msgs.lazy()
  .join(firstCall, { on: ['doc', 'tool_call_id'], how: 'left' })
  .withColumns(
    col('tool_call_id').isNotNull().and(col('call_index').isNull().or(col('call_index').gtEq(col('message_index')))).alias('orphan'),
    pl.when(col('image')).then(decoded).otherwise(pl.lit(0)).alias('ibytes'))
  .groupBy('doc').agg(
    col('id').first().alias('conversation_id'), col('title').first(), col('createdAt').first().alias('created_at'),
    col('extensions').first(), col('has_msg').sum().cast(pl.Int32).alias('message_count'),
    col('agentId').first().alias('agent_id'), col('skillIds').first().alias('skill_ids'),
    col('swarmRole').first().alias('swarm_role'), col('leaderId').first().alias('leader_id'),
    col('tokens_input').sum().fillNull(0).alias('tokens_input_total'),
    col('tokens_output').sum().fillNull(0).alias('tokens_output_total'),
    col('cost').sum().fillNull(0).alias('cost_total'),
    col('image').and(col('has_msg')).sum().cast(pl.Int32).alias('image_count'),
    col('ibytes').sum().fillNull(0).cast(pl.Int64).alias('image_bytes'),
    col('ncalls').sum().cast(pl.Int32).alias('tool_call_count'),
    col('orphan').sum().cast(pl.Int32).alias('tool_result_orphans'),
    col('has_receipt').first(), col('source_file').first())
  .sort('doc')
  .drop('doc')
  .collectSync();
conversations.writeParquet(`${opt.out}/conversations.parquet`, { compression: 'zstd' });
console.log(['rows', usage.height, conversations.height].join('\t'));
