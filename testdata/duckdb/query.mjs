// query.mjs runs SQL in an in-memory DuckDB through @duckdb/node-api and
// prints the result as JSON on standard output:
//
//   {"columns": [...], "types": [...], "rows": [{column: value, ...}, ...]}
//
// Usage:
//   node query.mjs SQL          run SQL (several statements may be separated
//                               by semicolons; the last one's result is printed)
//   node query.mjs              the same, SQL read from standard input
//   node query.mjs --json       standard input is a JSON array of SQL strings,
//                               run in order on one connection; the output is
//                               a JSON array of results
//
// The package is loaded from the directory named by DUCKDB_NODE_DIR (where
// internal/testkit/duckdbtest installs it), else from beside this script.
// Values are those of getRowObjectsJson: BIGINT, HUGEINT and DECIMAL as
// strings, DOUBLE as numbers, lists as arrays, maps as [{key, value}], NULL
// as null.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.DUCKDB_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(base, 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const args = process.argv.slice(2);
const many = args[0] === '--json';
let sqls;
if (many) {
  sqls = JSON.parse(readFileSync(0, 'utf8'));
} else {
  sqls = [args.length > 0 ? args.join(' ') : readFileSync(0, 'utf8')];
}
if (!Array.isArray(sqls) || sqls.some((s) => typeof s !== 'string' || s.trim() === '')) {
  process.stderr.write('query.mjs: no SQL given\n');
  process.exit(2);
}

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const results = [];
for (const [i, sql] of sqls.entries()) {
  try {
    const r = await con.runAndReadAll(sql);
    results.push({
      columns: r.columnNames(),
      types: r.columnTypes().map((t) => t.toString()),
      rows: r.getRowObjectsJson(),
    });
  } catch (e) {
    process.stderr.write(`duckdb: statement ${i + 1}: ${e && e.message ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(many ? results : results[0]) + '\n');
