-- The benchmark's ITEM table (bench/lib/data.mjs, peerSchemaYaml): the same five fields and the
-- same composite index [available, -price] as the generated service's table. Platformatic takes a
-- text primary key only as VARCHAR.
CREATE TABLE items (
  id VARCHAR(64) NOT NULL PRIMARY KEY,
  name VARCHAR(255) NOT NULL,
  qty INTEGER,
  price REAL,
  available BOOL
);
CREATE INDEX items__name__idx ON items (name);
CREATE INDEX items__available__price_desc__idx ON items (available, price DESC);
