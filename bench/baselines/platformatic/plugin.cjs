'use strict';
// Sets the SQLite durability of the benchmark on Platformatic's connection (its pool holds one
// connection to a SQLite file) and answers GET /health with the settings in force, which the
// runner prints next to the numbers.
module.exports = async function benchPlugin(app) {
  const { db, sql } = app.platformatic;
  const sync =
    (process.env.SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase() === 'FULL' ? 'FULL' : 'NORMAL';
  await db.query(sql`PRAGMA journal_mode = WAL`);
  await db.query(sql.__dangerous__rawValue(`PRAGMA synchronous = ${sync}`));
  const names = ['', 'OFF', 'NORMAL', 'FULL', 'EXTRA'];
  // Platformatic 2.61 binds a boolean filter value (`where.available.eq=true`) as a JavaScript
  // boolean, which better-sqlite3 rejects (500): store-side it is 1/0, so the filter is rewritten
  // to that before the query. Writes and reads already convert (true <-> 1).
  const fixWhere = (options) => {
    const eq = options?.where?.available?.eq;
    if (typeof eq === 'boolean') options.where.available.eq = eq ? 1 : 0;
    return options;
  };
  app.platformatic.addEntityHooks('item', {
    find: (original, options) => original(fixWhere(options)),
    count: (original, options) => original(fixWhere(options)),
  });
  app.get('/health', async () => {
    const [journal] = await db.query(sql`PRAGMA journal_mode`);
    const [synchronous] = await db.query(sql`PRAGMA synchronous`);
    return {
      journalMode: String(Object.values(journal)[0]).toUpperCase(),
      synchronous: names[Number(Object.values(synchronous)[0]) + 1] ?? 'unknown',
    };
  });
};
