// chdb.mjs runs a SQL file in an embedded ClickHouse (chDB, the npm package
// chdb) and exits: the ClickHouse peer measured by bench/run.sh.
//
//   node bench/chdb.mjs FILE.sql [NAME=VALUE ...]
//
// Every {{NAME}} in the file is replaced by VALUE (single quotes doubled, so
// values can stand inside SQL string literals). Statements are separated by
// a semicolon at the end of a line and run in order in one session (a fresh
// temporary data directory, removed on exit), so that a statement can use a
// table an earlier one made; the last statement's rows are printed to
// standard output, tab-separated. `node bench/chdb.mjs --version` prints
// ClickHouse's version. The package is loaded from CHDB_NODE_DIR
// (bench/run.sh installs it into bench/data/chdb), else from beside this
// script.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.CHDB_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const { Session } = require('chdb');

const args = process.argv.slice(2);
const session = new Session();
const run = (sql) => session.query(sql, 'TSV');
if (args[0] === '--version') {
  process.stdout.write(run('SELECT version()'));
  session.close();
  process.exit(0);
}
if (args.length < 1) {
  process.stderr.write('usage: node bench/chdb.mjs FILE.sql [NAME=VALUE ...]\n');
  process.exit(2);
}
let sql = readFileSync(args[0], 'utf8');
for (const kv of args.slice(1)) {
  const i = kv.indexOf('=');
  if (i < 0) {
    process.stderr.write(`chdb.mjs: not NAME=VALUE: ${kv}\n`);
    process.exit(2);
  }
  sql = sql.replaceAll(`{{${kv.slice(0, i)}}}`, kv.slice(i + 1).replaceAll("'", "''"));
}
const left = sql.match(/\{\{[A-Za-z_]+\}\}/);
if (left) {
  process.stderr.write(`chdb.mjs: no value for ${left[0]}\n`);
  process.exit(2);
}
// Drop comment lines, then split on semicolons that end a line.
const body = sql.split('\n').filter((l) => !l.trimStart().startsWith('--')).join('\n');
const stmts = body.split(/;[ \t]*(?:\n|$)/).map((s) => s.trim()).filter((s) => s !== '');
let code = 0;
for (const [i, s] of stmts.entries()) {
  try {
    const out = run(s);
    if (i === stmts.length - 1) process.stdout.write(out);
  } catch (e) {
    process.stderr.write(`chdb: statement ${i + 1}: ${e && e.message ? e.message : String(e)}\n`);
    code = 1;
    break;
  }
}
session.close();
process.exit(code);
