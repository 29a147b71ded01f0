// query.mjs runs SQL in an embedded ClickHouse (chDB, the npm package
// chdb) and prints the results as JSON on standard output, for
// internal/testkit/chdbtest.
//
//   node query.mjs < SQLS.json
//
// Standard input is a JSON array of SQL statements, run in order in one
// session (a fresh temporary data directory, removed on exit); the output
// is a JSON array with, for each statement, the array of its rows as
// objects (ClickHouse's JSON output format: 64-bit integers as strings).
// ClickHouse's file(), icebergLocal() and the like read only paths under
// the current directory: run node there and name paths relative to it.
// The package is loaded from CHDB_NODE_DIR, else from beside this script.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.CHDB_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const { Session } = require('chdb');

const sqls = JSON.parse(readFileSync(0, 'utf8'));
const session = new Session();
const out = [];
try {
  for (const [i, sql] of sqls.entries()) {
    let text;
    try {
      text = session.query(sql, 'JSON');
    } catch (e) {
      process.stderr.write(`chdb: statement ${i + 1}: ${e.message}\n`);
      process.exit(1);
    }
    out.push(text && text.trim() ? JSON.parse(text).data : []);
  }
} finally {
  session.cleanup?.();
}
process.stdout.write(JSON.stringify(out));
