// duckdb.mjs runs a SQL file in an in-memory DuckDB (the npm package
// @duckdb/node-api) and exits: the peer measured by bench/run.sh.
//
//   node bench/duckdb.mjs FILE.sql [NAME=VALUE ...]
//
// Every {{NAME}} in the file is replaced by VALUE (single quotes doubled, so
// values can stand inside SQL string literals). Statements are separated by
// a semicolon at the end of a line and run in order on one connection; the
// last statement's rows are printed to standard output, tab-separated. `node bench/duckdb.mjs --version` prints DuckDB's
// version. The package is loaded from DUCKDB_NODE_DIR (bench/run.sh installs
// it into bench/data/duckdb), else from beside this script.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.DUCKDB_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const args = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
if (args[0] === '--version') {
  const r = await con.runAndReadAll('SELECT version()');
  console.log(r.getRows()[0][0]);
  process.exit(0);
}
if (args.length < 1) {
  process.stderr.write('usage: node bench/duckdb.mjs FILE.sql [NAME=VALUE ...]\n');
  process.exit(2);
}
let sql = readFileSync(args[0], 'utf8');
for (const kv of args.slice(1)) {
  const i = kv.indexOf('=');
  if (i < 0) {
    process.stderr.write(`duckdb.mjs: not NAME=VALUE: ${kv}\n`);
    process.exit(2);
  }
  sql = sql.replaceAll(`{{${kv.slice(0, i)}}}`, kv.slice(i + 1).replaceAll("'", "''"));
}
const left = sql.match(/\{\{[A-Za-z_]+\}\}/);
if (left) {
  process.stderr.write(`duckdb.mjs: no value for ${left[0]}\n`);
  process.exit(2);
}
// Drop comment lines, then split on semicolons that end a line.
const body = sql.split('\n').filter((l) => !l.trimStart().startsWith('--')).join('\n');
const stmts = body.split(/;[ \t]*(?:\n|$)/).map((s) => s.trim()).filter((s) => s !== '');
for (const [i, s] of stmts.entries()) {
  try {
    const r = await con.runAndReadAll(s);
    if (i === stmts.length - 1 && r.columnCount > 0) {
      for (const row of r.getRows()) console.log(row.map((v) => String(v)).join('\t'));
    }
  } catch (e) {
    process.stderr.write(`duckdb: statement ${i + 1}: ${e && e.message ? e.message : String(e)}\n`);
    process.exit(1);
  }
}
process.exit(0);
