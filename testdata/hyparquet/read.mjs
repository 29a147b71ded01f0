// read.mjs reads Parquet files with hyparquet (and hyparquet-compressors
// for zstd) and prints them as one JSON array on standard output, one
// element per file:
//
//   {"file": ..., "created_by": ..., "num_rows": N,
//    "columns": [top-level column names], "rows": [[cell, ...], ...]}
//
// Usage:
//   node read.mjs FILE...              read every column at once
//   node read.mjs --by-column FILE...  read each column on its own (the
//                                      rows are then zipped), as a
//                                      client selecting columns does
//
// Cells are as hyparquet returns them, made JSON-safe: INT64 (BigInt) as a
// decimal string; timestamps as a decimal string of microseconds since the
// epoch (through a custom parser, so that no precision is lost to Date);
// non-finite doubles as the strings "NaN", "Infinity", "-Infinity"; lists
// as arrays; maps (the only objects hyparquet returns for convbatch's
// tables) as arrays of [key, value] pairs in hyparquet's order; null as
// null. Exit status 1 and a message on standard error when a file cannot be
// read.
//
// The packages are loaded from the directory named by HYPARQUET_NODE_DIR
// (where internal/testkit/hyparquettest installs them), else from beside this
// script.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const base = process.env.HYPARQUET_NODE_DIR || path.dirname(fileURLToPath(import.meta.url));
// Both packages are ES modules: resolve them from base, then import.
const require = createRequire(path.join(base, 'package.json'));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const hyparquet = await load('hyparquet'); // Node's entry point, with asyncBufferFromFile
const { compressors } = await load('hyparquet-compressors');

let files = process.argv.slice(2);
const byColumn = files[0] === '--by-column';
if (byColumn) files = files.slice(1);
if (files.length === 0) {
  process.stderr.write('read.mjs: no file given\n');
  process.exit(2);
}

const parsers = {
  timestampFromMicroseconds: (micros) => String(micros),
  timestampFromMilliseconds: (millis) => String(BigInt(millis) * 1000n),
};

function safe(v) {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isFinite(v) ? v : String(v);
    case 'string':
    case 'boolean':
      return v;
    case 'object':
      if (Array.isArray(v)) return v.map(safe);
      if (v instanceof Date) return String(BigInt(v.getTime()) * 1000n);
      if (v instanceof Uint8Array) return Array.from(v);
      return Object.entries(v).map(([k, x]) => [k, safe(x)]);
    default:
      throw new Error(`unexpected ${typeof v} value`);
  }
}

const out = [];
for (const name of files) {
  try {
    const file = await hyparquet.asyncBufferFromFile(name);
    const metadata = await hyparquet.parquetMetadataAsync(file);
    const columns = hyparquet.parquetSchema(metadata).children.map((c) => c.element.name);
    const read = async (cols) => {
      let rows;
      await hyparquet.parquetRead({
        file,
        metadata,
        columns: cols,
        compressors,
        parsers,
        rowFormat: 'array',
        onComplete: (data) => {
          rows = data.map((r) => r.map(safe));
        },
      });
      return rows;
    };
    let rows;
    if (byColumn) {
      rows = Array.from({ length: Number(metadata.num_rows) }, () => []);
      for (const c of columns) {
        const cells = await read([c]);
        if (cells.length !== rows.length) throw new Error(`column ${c}: ${cells.length} rows, footer says ${rows.length}`);
        cells.forEach((r, i) => rows[i].push(r[0]));
      }
    } else {
      rows = await read(undefined);
    }
    out.push({ file: name, created_by: metadata.created_by ?? null, num_rows: Number(metadata.num_rows), columns, rows });
  } catch (e) {
    process.stderr.write(`hyparquet: ${name}: ${e && e.stack ? e.stack : String(e)}\n`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out) + '\n');
