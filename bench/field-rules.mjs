#!/usr/bin/env node
// Field rules (SPEC §16): what three constraints, a unique field and a generated key cost on
// writes, on a generated service over HTTP on loopback, SQLite (synchronous FULL) or PostgreSQL.
//
//   node bench/field-rules.mjs                 5 rounds: 300 POSTs of one record, 1 list of 10 000
//   node bench/field-rules.mjs --quick         2 rounds: 100 POSTs, 1 list of 2 000 (< 1 min)
//   DATABASE_URL=postgres://… node bench/field-rules.mjs   the same on PostgreSQL
//
// Options (override the mode): --requests=N --list=N --rounds=N
//
// Needs `npm run build`. It writes a schema of two entities with the same fields into
// bench/output/field-rules — PLAIN (no rules; the client sends the key) and RULED (a UUID v7 key
// the server generates, `email` unique, and the constraints min/max on `age`, a pattern on `code`
// and min on `price`) — generates and compiles the service, starts it as a child process on
// 127.0.0.1 and, in each round, for each entity in turn, times --requests sequential POSTs of one
// record (one connection, keep-alive; p50) and one POST of a list of --list records. It prints
// the medians over the rounds and RULED/PLAIN throughput ratios; it asserts no timing.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  agent,
  generateService,
  http,
  log,
  median,
  parseOptions,
  quantile,
  requireBuild,
  startService,
} from './lib/service.mjs';
import { ROOT } from './lib/setup.mjs';

const OUT = join(ROOT, 'bench', 'output', 'field-rules');
const SERVICE = join(OUT, 'service');
const SCHEMA = join(OUT, 'schema.yaml');

const { quick: QUICK, option } = parseOptions(
  process.argv.slice(2),
  ['requests', 'list', 'rounds'],
  'field-rules.mjs',
);
const REQUESTS = option('requests') ?? (QUICK ? 100 : 300);
const LIST = option('list') ?? (QUICK ? 2_000 : 10_000);
const ROUNDS = option('rounds') ?? (QUICK ? 2 : 5);
const WARMUP = 30;

const FIELDS = `    - { name: name, type: STRING }
    - { name: email, type: STRING RULE_EMAIL }
    - { name: age, type: INTEGER RULE_AGE }
    - { name: code, type: STRING RULE_CODE }
    - { name: price, type: DECIMAL RULE_PRICE }`;
const SCHEMA_TEXT = `type: ENTITY
entity:
  name: PLAIN
  lk: [id]
  fields:
    - { name: id, type: STRING, required: true }
${FIELDS.replace(/ RULE_\w+/g, '')}
---
type: ENTITY
entity:
  name: RULED
  lk: [id]
  fields:
    - { name: id, type: STRING, generated: uuid }
${FIELDS.replace(' RULE_EMAIL', ', unique: true')
  .replace(' RULE_AGE', ', min: 0, max: 150')
  .replace(' RULE_CODE', ', pattern: "^[A-Z]{3}-\\\\d+$"')
  .replace(' RULE_PRICE', ', min: 0')}
`;

let counter = 0;
const salt = randomBytes(4).toString('hex');
/** A record for `entity`: distinct email (and id for PLAIN), values inside every limit. */
function record(entity) {
  const n = counter++;
  return {
    ...(entity === 'plain' ? { id: `p-${salt}-${n}` } : {}),
    name: `Customer ${n}`,
    email: `c${n}-${salt}@example.com`,
    age: n % 100,
    code: `ABC-${n}`,
    price: `${n % 1000}.50`,
  };
}

async function postOne(base, entity) {
  const response = await http(base, 'POST', `/data/${entity}`, { data: record(entity) });
  if (response.status !== 200)
    throw new Error(`POST ${entity}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.ms;
}

async function timeOnes(base, entity) {
  const times = [];
  for (let i = 0; i < REQUESTS; i++) times.push(await postOne(base, entity));
  times.sort((a, b) => a - b);
  return quantile(times, 0.5);
}

async function timeList(base, entity) {
  const data = Array.from({ length: LIST }, () => record(entity));
  const response = await http(base, 'POST', `/data/${entity}`, { data });
  if (response.status !== 200)
    throw new Error(`POST list ${entity}: ${response.status} ${response.text.slice(0, 300)}`);
  return response.ms;
}

requireBuild();
rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
writeFileSync(SCHEMA, SCHEMA_TEXT);
log('generating and compiling the service…');
await generateService(SCHEMA, SERVICE);
const databaseUrl = process.env.DATABASE_URL ?? `sqlite:${join(OUT, 'field-rules.db')}`;
const server = await startService(SERVICE, databaseUrl);
const results = { plain: { one: [], list: [] }, ruled: { one: [], list: [] } };
try {
  for (const entity of ['plain', 'ruled'])
    for (let i = 0; i < WARMUP; i++) await postOne(server.base, entity);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which entity goes first, so a drift of the machine's load favours neither.
    const order = round % 2 === 0 ? ['plain', 'ruled'] : ['ruled', 'plain'];
    for (const entity of order) results[entity].one.push(await timeOnes(server.base, entity));
    for (const entity of order) results[entity].list.push(await timeList(server.base, entity));
    log(`round ${round + 1}/${ROUNDS} done`);
  }
} finally {
  agent.destroy();
  await server.stop();
}

const fmt = (ms) => (ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(0)} ms`);
const one = { plain: median(results.plain.one), ruled: median(results.ruled.one) };
const list = { plain: median(results.plain.list), ruled: median(results.ruled.list) };
const driver = databaseUrl.startsWith('postgres') ? 'PostgreSQL' : 'SQLite (synchronous FULL)';
console.log(
  `Field rules on ${driver}, ${os.cpus().length} cores, Node ${process.version}; ` +
    `${ROUNDS} rounds, median of the rounds\n`,
);
console.log('| Write | PLAIN | RULED | RULED throughput / PLAIN |');
console.log('| --- | --- | --- | --- |');
console.log(
  `| POST one record (p50 of ${REQUESTS}) | ${fmt(one.plain)} | ${fmt(one.ruled)} | ${(one.plain / one.ruled).toFixed(2)}× |`,
);
console.log(
  `| POST a list of ${LIST.toLocaleString('en')} | ${fmt(list.plain)} | ${fmt(list.ruled)} | ${(list.plain / list.ruled).toFixed(2)}× |`,
);
