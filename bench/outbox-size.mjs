#!/usr/bin/env node
// The space of the SQLite change-event outbox (`_eg_events`, SPEC §9) after the benchmark's
// 100 000 bulk-inserted ITEM records (the rows of the Platformatic comparison, 1 000 per request),
// in the layout the driver writes today and in the layouts proposed to shrink it:
//
//   node bench/outbox-size.mjs [--rows=N] [--batch=N]
//
// - full: one row per event holding the record's JSON (what the driver writes);
// - no body: one row per event without the record (a body read from the entity table instead);
// - packed (deflate / brotli 4): one row per transaction holding all its events, compressed.
//
// Prints each layout's size (dbstat: table pages; MB of 2^20 bytes, as bench/run.mjs) and, for the packed ones, the CPU per request
// spent building and compressing the pack. Then the same records inserted through the SQLite
// driver of runtime/dist (`npm run build` first) into the peer comparison's ITEM table (its
// `index: true` and composite index), as a service's bulk POSTs store them: the file's size and
// its largest tables and indexes. `node bench/run.mjs --only=platformatic` measures the same file
// through HTTP, next to Platformatic's.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, deflateRawSync } from 'node:zlib';
import { peerRecord } from './lib/data.mjs';
import { peerKey } from './lib/platformatic.mjs';

const require = createRequire(new URL('../runtime/package.json', import.meta.url));
const Database = require('better-sqlite3');

const option = (name, fallback) => {
  const given = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return given === undefined ? fallback : Number(given);
};
const ROWS = option('rows', 100_000);
const BATCH = option('batch', 1_000);
const TIME = 1_795_605_662_099;
/** As bench/run.mjs counts them. */
const MB = 2 ** 20;

const LAYOUTS = {
  full: (drafts, insert, first) =>
    drafts.forEach(([id, record], i) => {
      insert.run(first + i, 'ITEM', id, 'created', record, TIME);
    }),
  'no body': (drafts, insert, first) =>
    drafts.forEach(([id], i) => {
      insert.run(first + i, 'ITEM', id, 'created', '', TIME);
    }),
  'packed, deflate': (drafts, insert, first) =>
    insert.run(first + drafts.length - 1, 'ITEM', '', 'pack', deflateRawSync(pack(drafts)), TIME),
  'packed, brotli 4': (drafts, insert, first) =>
    insert.run(
      first + drafts.length - 1,
      'ITEM',
      '',
      'pack',
      brotliCompressSync(pack(drafts), { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }),
      TIME,
    ),
};

function pack(drafts) {
  return Buffer.from(JSON.stringify(drafts.map(([id, record]) => [id, 'created', record])));
}

const dir = mkdtempSync(join(tmpdir(), 'eg-outbox-size-'));
try {
  console.log(`${ROWS} records in requests of ${BATCH}`);
  for (const [name, write] of Object.entries(LAYOUTS)) {
    const db = new Database(join(dir, `${name.replace(/\W+/g, '-')}.db`));
    db.exec(
      'CREATE TABLE _eg_events (seq INTEGER PRIMARY KEY, entity TEXT NOT NULL, ' +
        'record_id TEXT NOT NULL, op TEXT NOT NULL, record TEXT NOT NULL, time_ms INTEGER NOT NULL)',
    );
    const insert = db.prepare(
      'INSERT INTO _eg_events (seq, entity, record_id, op, record, time_ms) VALUES (?, ?, ?, ?, ?, ?)',
    );
    let cpu = 0;
    for (let from = 0; from < ROWS; from += BATCH) {
      const drafts = [];
      for (let n = from; n < Math.min(ROWS, from + BATCH); n++) {
        drafts.push([peerKey(n), JSON.stringify(peerRecord(peerKey(n), n))]);
      }
      const started = process.cpuUsage();
      db.transaction(() => write(drafts, insert, from + 1))();
      const used = process.cpuUsage(started);
      cpu += used.user + used.system;
    }
    const { bytes } = db
      .prepare(`SELECT sum(pgsize) AS bytes FROM dbstat WHERE name = '_eg_events'`)
      .get();
    db.close();
    const requests = Math.ceil(ROWS / BATCH);
    console.log(
      `${name.padEnd(18)} ${(bytes / MB).toFixed(2).padStart(6)} MB  ` +
        `${(bytes / ROWS).toFixed(1).padStart(6)} B/event  ` +
        `${(cpu / 1000 / requests).toFixed(2).padStart(6)} ms CPU/request (insert + pack)`,
    );
  }

  // The driver's file.
  const { openSqlite } = await import('../runtime/dist/sqlite/index.js');
  const { tableOf } = await import('../runtime/dist/schema.js');
  const item = tableOf(
    {
      name: 'ITEM',
      lk: ['id'],
      indexes: [['available', '-price']],
      fields: [
        { name: 'id', type: 'STRING', required: true },
        { name: 'name', type: 'STRING', required: true, index: true },
        { name: 'qty', type: 'INTEGER' },
        { name: 'price', type: 'DOUBLE' },
        { name: 'available', type: 'BOOL' },
      ],
    },
    new Set(),
  );
  const file = join(dir, 'service.db');
  const driver = await openSqlite({ filename: file }, [item]);
  for (let from = 0; from < ROWS; from += BATCH) {
    const records = [];
    for (let n = from; n < Math.min(ROWS, from + BATCH); n++)
      records.push(peerRecord(peerKey(n), n));
    await driver.insert(item, records, TIME + from);
  }
  await driver.close();
  const db = new Database(file, { readonly: true });
  const objects = db
    .prepare(
      'SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC LIMIT 5',
    )
    .all();
  db.close();
  const { size } = statSync(file);
  console.log(
    `driver file: ${(size / MB).toFixed(2)} MB; ` +
      objects.map(({ name, bytes }) => `${name} ${(bytes / MB).toFixed(2)} MB`).join(', '),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
