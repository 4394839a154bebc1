/**
 * What some test groups need from the machine — a PostgreSQL database (`TEST_DATABASE_URL`), the
 * PostgreSQL server binaries for private clusters, Chromium — and the one way such a group is
 * declared: `describeWith(requirement, title, factory)`.
 *
 * When the requirement is met the group runs as `describe(title, …)`. When it is not, every case
 * of the group is still collected and reported as skipped (the run's summary says "N skipped"),
 * under a title that says why. Under CI (`CI` set, and not `false` or `0`) a missing requirement
 * is an error instead: the file fails at collection with a message naming what is missing, so CI
 * never passes with environment tests silently left out.
 */
import { existsSync } from 'node:fs';
import { describe } from 'vitest';
import { detectPostgresEnvironment, type PostgresEnvironment } from './private-postgres.js';
import { findTopologyBinaries } from './topology.js';

/** Something a test group needs from the machine. */
export interface Requirement<T> {
  /** What is needed, for messages: e.g. "a PostgreSQL database (TEST_DATABASE_URL)". */
  readonly need: string;
  /** Why it is not available here, or undefined when it is. */
  readonly missing: string | undefined;
  /**
   * The value the group works with (the database URL, the binaries, the browser's path). When the
   * requirement is missing this is a stand-in that only lets the skipped group be collected: no
   * hook or case of a skipped group runs.
   */
  readonly value: T;
}

/** True when the tests run under CI, where no environment test may be skipped. */
export function underCi(): boolean {
  const ci = process.env['CI'];
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/**
 * True when a group needing `requirement` must be skipped here (and the reason is its `missing`);
 * throws when it is missing under CI. For a single case: `it.skipIf(skipWithout(r))(…)`.
 */
export function skipWithout(requirement: Requirement<unknown>): boolean {
  if (requirement.missing === undefined) return false;
  if (underCi())
    throw new Error(
      `CI requires ${requirement.need}, but ${requirement.missing}: ` +
        'environment tests may not be skipped when CI is set',
    );
  if (!warned.has(requirement)) {
    warned.add(requirement);
    console.warn(`Skipped here: tests that need ${requirement.need}: ${requirement.missing}`);
  }
  return true;
}

const warned = new Set<Requirement<unknown>>();

/** The title of a skipped group: its own title and why it is skipped. */
export function skippedTitle(title: string, requirement: Requirement<unknown>): string {
  return requirement.missing === undefined ? title : `${title} (skipped: ${requirement.missing})`;
}

/**
 * `describe(title, () => factory(value))` when `requirement` is met; else the same group with all
 * its cases skipped, titled with the reason (and an error under CI, see `skipWithout`).
 */
export function describeWith<T>(
  requirement: Requirement<T>,
  title: string,
  factory: (value: T) => void,
): void {
  describe.skipIf(skipWithout(requirement))(skippedTitle(title, requirement), () =>
    factory(requirement.value),
  );
}

const url = process.env['TEST_DATABASE_URL'];

/** A PostgreSQL database for the tests' schemas, named by `TEST_DATABASE_URL`. */
export const POSTGRES: Requirement<string> = {
  need: 'a PostgreSQL database (TEST_DATABASE_URL)',
  missing:
    url === undefined || url === ''
      ? 'TEST_DATABASE_URL is not set (e.g. TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)'
      : undefined,
  value: url ?? '',
};

/** The URL of `POSTGRES`, or undefined when it is not set. */
export const TEST_DATABASE_URL: string | undefined =
  POSTGRES.missing === undefined ? url : undefined;

let privateCluster: Requirement<PostgresEnvironment> | undefined;

/** The PostgreSQL server binaries, to run private clusters that tests stop, start and freeze. */
export function privatePostgres(): Requirement<PostgresEnvironment> {
  if (privateCluster !== undefined) return privateCluster;
  const environment = detectPostgresEnvironment();
  const unavailable = (): never => {
    throw new Error('the PostgreSQL server binaries are not available');
  };
  privateCluster =
    typeof environment === 'string'
      ? {
          need: 'the PostgreSQL server binaries (initdb, pg_ctl) for private clusters',
          missing: environment,
          value: { bin: '', owner: undefined, runAs: unavailable },
        }
      : {
          need: 'the PostgreSQL server binaries (initdb, pg_ctl) for private clusters',
          missing: undefined,
          value: environment,
        };
  return privateCluster;
}

let topology:
  | Requirement<{ postgres: PostgresEnvironment; pgbouncer: string; haproxy: string }>
  | undefined;

/**
 * A production-like topology on 127.0.0.1 (SPEC §15): the PostgreSQL server binaries for a private
 * primary and its streaming replica (initdb, pg_basebackup), and the PgBouncer and HAProxy
 * binaries (Debian packages `pgbouncer`, `haproxy`).
 */
export function topologyParts(): Requirement<{
  postgres: PostgresEnvironment;
  pgbouncer: string;
  haproxy: string;
}> {
  if (topology !== undefined) return topology;
  const postgres = privatePostgres();
  const binaries = findTopologyBinaries();
  const missing =
    postgres.missing ?? (typeof binaries === 'string' ? binaries : undefined) ?? undefined;
  topology = {
    need: 'PostgreSQL server binaries, pgbouncer and haproxy for the topology test',
    missing,
    value: {
      postgres: postgres.value,
      pgbouncer: typeof binaries === 'string' ? '' : binaries.pgbouncer,
      haproxy: typeof binaries === 'string' ? '' : binaries.haproxy,
    },
  };
  return topology;
}

const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Chromium, for the tests in a real browser: `CHROMIUM_PATH`, else /usr/bin/chromium. */
export const CHROMIUM: Requirement<string> = {
  need: `Chromium (${chromiumPath})`,
  missing: existsSync(chromiumPath)
    ? undefined
    : `no Chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_PATH)`,
  value: chromiumPath,
};
