/**
 * The PostgreSQL outbox's numbering (runtime/src/postgres/outbox.ts, relay.ts) with writers on
 * several drivers at once: every committed change is in the log exactly once, seqs are gapless,
 * and each driver's watchers (what `afterCommit` hooks hear) get each of its own changes exactly
 * once, with the seq the log gave it — whichever driver's relay numbered it.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx vitest run test/drivers/postgres-outbox
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { describeWith, POSTGRES } from '../helpers/environment.js';
import type { StoredChange, TableDescriptor } from '../../runtime/src/driver.js';
import { NUMBERED_INSERT } from '../../runtime/src/postgres/driver.js';
import { PostgresDriver } from '../../runtime/src/postgres/index.js';

const ITEMS: TableDescriptor = {
  entity: 'ITEMS',
  table: 'items',
  key: ['id'],
  columns: [
    { name: 'id', kind: 'text', fieldType: 'STRING', required: true, indexed: false },
    { name: 'n', kind: 'integer', fieldType: 'INTEGER', required: false, indexed: false },
  ],
};

describeWith(POSTGRES, 'PostgreSQL outbox under concurrent writers', (url) => {
  const schema = `eg_test_outbox_${process.pid}_${randomBytes(4).toString('hex')}`;

  afterAll(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  });

  it('each driver hears each of its own changes exactly once, with the seq of the log', async () => {
    const drivers = Array.from(
      { length: 4 },
      () => new PostgresDriver({ url, env: {}, schema, poolMax: 6 }),
    );
    const heard = drivers.map(() => [] as StoredChange[]);
    try {
      // One after another: concurrent opens on a fresh schema are covered elsewhere.
      for (const driver of drivers) await driver.open([ITEMS]);
      for (const [d, driver] of drivers.entries()) {
        driver.changes.watch((committed) => {
          heard[d]!.push(...committed);
        });
      }
      const start = (await drivers[0]!.changes.bounds()).last;

      // What each driver committed: "<op> <id>" per change, in the order of its writes.
      const committed = drivers.map(() => [] as string[]);
      const writer = async (d: number, w: number): Promise<void> => {
        const driver = drivers[d]!;
        for (let i = 0; i < 40; i++) {
          const id = `d${d}-w${w}-${i}`;
          const now = 1_000 + i;
          if (i % 10 === 9) {
            // A list insert: its changes may interleave with other writes' in the log. A long one
            // numbers its changes itself, under the counter's lock (NUMBERED_INSERT).
            const size = i % 20 === 19 ? NUMBERED_INSERT : 3;
            const ids = Array.from({ length: size }, (_, k) => `${id}-${k}`);
            await driver.insert(
              ITEMS,
              ids.map((k) => ({ id: k, n: i })),
              now,
            );
            committed[d]!.push(...ids.map((k) => `created ${k}`));
            continue;
          }
          await driver.insert(ITEMS, [{ id, n: i }], now);
          committed[d]!.push(`created ${id}`);
          if (i % 3 === 0) {
            const result = await driver.update(ITEMS, [id], { id, n: -i }, 1, now);
            expect(result.status).toBe('updated');
            committed[d]!.push(`updated ${id}`);
          }
          if (i % 4 === 0) {
            const renamed = `${id}-renamed`;
            const version = i % 3 === 0 ? 2 : 1;
            const result = await driver.update(ITEMS, [id], { id: renamed, n: i }, version, now);
            expect(result.status).toBe('updated');
            committed[d]!.push(`deleted ${id}`, `created ${renamed}`);
            await driver.delete(ITEMS, [renamed], undefined, now);
            committed[d]!.push(`deleted ${renamed}`);
          }
        }
      };
      // Six concurrent writers per driver, and a load of reads of the log meanwhile (they relay too).
      let reading = true;
      const reader = (async () => {
        while (reading) {
          await drivers[3]!.changes.read(start, 50);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      await Promise.all(drivers.flatMap((_, d) => [0, 1, 2, 3, 4, 5].map((w) => writer(d, w))));
      reading = false;
      await reader;

      // The log: every committed change once, seqs gapless from start + 1.
      const log: StoredChange[] = [];
      for (let after = start; ; ) {
        const page = await drivers[0]!.changes.read(after, 1000);
        if (page.length === 0) break;
        log.push(...page);
        after = page.at(-1)!.seq;
      }
      const total = committed.reduce((sum, list) => sum + list.length, 0);
      expect(log).toHaveLength(total);
      expect(log.map((c) => c.seq)).toEqual(log.map((_, i) => start + 1 + i));
      const bySeq = new Map(log.map((c) => [c.seq, c]));

      for (let d = 0; d < drivers.length; d++) {
        // Exactly once: no seq twice, and every own change (by op and id) heard.
        const seqs = heard[d]!.map((c) => c.seq);
        expect(new Set(seqs).size).toBe(seqs.length);
        expect(heard[d]!.map((c) => `${c.op} ${c.id}`).sort()).toEqual([...committed[d]!].sort());
        // Each heard change is the log's change of that seq.
        for (const change of heard[d]!) {
          const logged = bySeq.get(change.seq);
          expect(logged && `${logged.op} ${logged.id} ${logged.record}`).toBe(
            `${change.op} ${change.id} ${change.record}`,
          );
        }
        // Each writer's own changes in the log in the order it made them.
        for (let w = 0; w < 6; w++) {
          const prefix = `d${d}-w${w}-`;
          const mine = log.filter((c) => c.id.startsWith(prefix)).map((c) => `${c.op} ${c.id}`);
          expect(mine).toEqual(committed[d]!.filter((c) => c.split(' ')[1]!.startsWith(prefix)));
        }
      }
    } finally {
      await Promise.all(drivers.map((driver) => driver.close()));
    }
  }, 120_000);
});

describe('parseArrivals', () => {
  it('reads the text of a BIGINT array', async () => {
    const { parseArrivals } = await import('../../runtime/src/postgres/relay.js');
    expect(parseArrivals('{1,22,333}')).toEqual([1, 22, 333]);
    expect(parseArrivals('{}')).toEqual([]);
  });
});
