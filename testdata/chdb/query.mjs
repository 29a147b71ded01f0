// query.mjs runs SQL in an embedded ClickHouse (chDB, the npm package
// chdb) and prints the results as JSON on standard output, for
// internal/testkit/chdbtest.
//
//   node query.mjs < SQLS.json
//   node query.mjs --serve
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

// run runs sqls in order in one fresh session and returns their rows; a
// failing statement throws an Error naming it.
function run(sqls) {
  const session = new Session();
  const out = [];
  try {
    for (const [i, sql] of sqls.entries()) {
      let text;
      try {
        text = session.query(sql, 'JSON');
      } catch (e) {
        throw new Error(`chdb: statement ${i + 1}: ${e.message}`);
      }
      out.push(text && text.trim() ? JSON.parse(text).data : []);
    }
  } finally {
    session.cleanup?.();
  }
  return out;
}

if (process.argv[2] === '--serve') {
  // Serve many requests in one process (loading chDB takes seconds): each
  // line of standard input is {"dir": DIR, "sqls": [...]}, run in a fresh
  // session with DIR as the current directory; each answer is one line,
  // {"rows": [...]} or {"error": MESSAGE}. The process ends at the end of
  // its input (the test process that started it ended).
  const { createInterface } = await import('node:readline');
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (!line.trim()) continue;
    let answer;
    try {
      const req = JSON.parse(line);
      process.chdir(req.dir);
      answer = { rows: run(req.sqls) };
    } catch (e) {
      answer = { error: e.message };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
  }
  process.exit(0);
} else {
  let out;
  try {
    out = run(JSON.parse(readFileSync(0, 'utf8')));
  } catch (e) {
    process.stderr.write(e.message + '\n');
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(out));
}
