#!/usr/bin/env node
// What answering a list costs after the query: turning a page of records into the bytes Koa
// writes. Compares, in one process and without a server,
//
//   object   today's path: the envelope object, JSON.stringify by Koa, Buffer.byteLength for
//            Content-Length, and the UTF-8 encoding res.end(string) does (modelled here by
//            Buffer.from; Node does it while writing to the socket)
//   pieces   the JSON text assembled from one JSON.stringify per record (joined), then the same
//            Content-Length and encoding work
//   buffer   the envelope stringified once and encoded once into a Buffer (Koa takes its length
//            as Content-Length and writes it as is)
//
//   node bench/list-body.mjs               pages of 1000 and 100 PRODUCT records, 5 rounds
//   node bench/list-body.mjs --quick       1 round
//   node bench/list-body.mjs --rounds=N    N rounds
//
// Prints the median time per page and checks that every variant yields the same bytes. It asserts
// no timing.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';

const roundsOption = process.argv.find((arg) => arg.startsWith('--rounds='));
const ROUNDS =
  roundsOption !== undefined
    ? Number(roundsOption.slice('--rounds='.length))
    : process.argv.includes('--quick')
      ? 1
      : 5;
/** Serializations per timed batch, per page size. */
const BATCH = { 1000: 200, 100: 2000 };

/** A PRODUCT of the shop fixture as the driver returns it (every field type, canonical). */
function product(n) {
  return {
    code: `p${n}`,
    name: `Product ${n} — with a name of ordinary length`,
    category: 'tools',
    price: '19.99',
    stock: 42 + n,
    weightKg: 1.5,
    available: n % 2 === 0,
    releaseDate: '2024-02-29',
    lastRestock: '2024-02-29T23:30:00.000Z',
    status: 'ACTIVE',
    size: 'M',
    dimensions: { width: 10, height: 2.5, unit: 'cm' },
    tags: ['new', 'sale'],
    ratings: [5, 4],
    variants: [{ sku: `p${n}-red`, color: 'red', extraPrice: '1.5' }],
    sizeChart: [[1, 2], [3.5]],
    prices: { EUR: { amount: '19.99', validFrom: '2024-01-01' } },
    image: 'data:image/png;base64,iVBORw0KGgo=',
    attributes: { anything: [1, 'two', null] },
    warehouse: { lat: 43.7167, lng: 10.4, geohash: 'spz2u2k0b1c2' },
  };
}

const META = {
  limit: 1000,
  next: 'eyJ2IjoxLCJxIjoiYWJjZGVmZ2hpamtsbW5vcCIsImwiOjEwMDAsImEiOlsicDk5OSJdfQ.c2lnbmF0dXJlc2lnbmF0dXJl',
};

const variants = {
  object(records) {
    const text = JSON.stringify({ status: 'success', data: records, meta: META });
    const length = Buffer.byteLength(text);
    return [Buffer.from(text), length];
  },
  pieces(records) {
    const text = `{"status":"success","data":[${records.map((record) => JSON.stringify(record)).join(',')}],"meta":${JSON.stringify(META)}}`;
    const length = Buffer.byteLength(text);
    return [Buffer.from(text), length];
  },
  buffer(records) {
    const bytes = Buffer.from(JSON.stringify({ status: 'success', data: records, meta: META }));
    return [bytes, bytes.length];
  },
};

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rows = [];
for (const size of [1000, 100]) {
  const records = Array.from({ length: size }, (_, n) => product(n));
  const reference = variants.object(records)[0];
  for (const [name, serialize] of Object.entries(variants)) {
    const [bytes, length] = serialize(records);
    if (!bytes.equals(reference) || length !== reference.length) {
      throw new Error(`${name} does not give the same bytes`);
    }
  }
  const times = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    // Interleaved, so that a busy moment of the machine hits every variant alike.
    for (const [name, serialize] of Object.entries(variants)) {
      for (let n = 0; n < BATCH[size] / 10; n++) serialize(records); // warm-up
      const started = performance.now();
      for (let n = 0; n < BATCH[size]; n++) serialize(records);
      times[name].push((performance.now() - started) / BATCH[size]);
    }
  }
  const base = median(times.object);
  for (const name of Object.keys(variants)) {
    const ms = median(times[name]);
    rows.push(
      `| ${size} | ${(reference.length / 1024).toFixed(0)} KiB | ${name} | ${ms.toFixed(3)} ms | ${(ms / base).toFixed(2)}× |`,
    );
  }
}

console.log(`node ${process.version}, ${ROUNDS} round(s), median time per page`);
console.log('');
console.log('| records | body | variant | per page | vs object |');
console.log('| ------: | ---: | ------- | -------: | --------: |');
for (const row of rows) console.log(row);
