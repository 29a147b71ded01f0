// polars_compare.mjs reads the same tables from two OUT directories with
// Polars (npm nodejs-polars, as bench/polars.mjs finds it: POLARS_NODE_DIR,
// which bench/run.sh installs into bench/data/polars) and compares them
// frame for frame, nulls included: the Polars reader's check of the
// Parquet engines' A/B (bench/engine-ab.sh, issue 46 item 2).
//
//   node bench/polars_compare.mjs OUT_A OUT_B TABLE...
//
// Prints `TABLE rows_a rows_b columns equal|DIFFERENT` a table, and exits 1
// if any differs.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const base = process.env.POLARS_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(path.resolve(base), 'package.json'));
const pl = require('nodejs-polars');

const [a, b, ...tables] = process.argv.slice(2);
if (!a || !b || tables.length === 0) {
  process.stderr.write('usage: node bench/polars_compare.mjs OUT_A OUT_B TABLE...\n');
  process.exit(2);
}
const read = (out, table) => {
  const dir = path.join(out, 'tables', table);
  const parts = fs.readdirSync(dir).filter((f) => f.endsWith('.parquet')).sort();
  return pl.concat(parts.map((p) => pl.readParquet(path.join(dir, p))));
};
let bad = 0;
for (const t of tables) {
  const x = read(a, t);
  const y = read(b, t);
  const same = x.frameEqual(y, true);
  console.log(`${t}\t${x.height}\t${y.height}\t${x.width}\t${same ? 'equal' : 'DIFFERENT'}`);
  if (!same) bad++;
}
process.exit(bad ? 1 : 0);
