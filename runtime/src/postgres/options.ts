/**
 * Settings of the PostgreSQL driver: the `postgres://` URL grammar and its parameters, the
 * environment variables (`PGPOOL_MAX` & co.), their defaults and checks, and how the driver's
 * constructor arguments resolve to one settings object.
 */
import type pg from 'pg';
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import type { Environment } from '../env.js';
import { parse as parseConnectionString, type ConnectionOptions } from 'pg-connection-string';

/** How TLS is used for the connection, as in libpq's `sslmode` (`allow`/`prefer` are not supported). */
export type PostgresSslMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

/** Settings of a PostgreSQL driver; everything except the connection target has a default. */
export interface PostgresSettings {
  /** Host name, IP address or Unix-socket directory; `undefined` lets `pg` use `PGHOST`/localhost. */
  readonly host: string | undefined;
  readonly port: number | undefined;
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly database: string | undefined;
  /** Schema that holds the tables (created at open when missing); `undefined`: the search_path's first schema. */
  readonly schema: string | undefined;
  /** Maximum connections of the pool. */
  readonly poolMax: number;
  /** Server-side statement timeout in milliseconds; 0 disables it. */
  readonly statementTimeoutMs: number;
  /** Time allowed to open a connection, or to wait for a free pooled one, in milliseconds. */
  readonly connectTimeoutMs: number;
  /** Idle pooled connections are closed after this many milliseconds. */
  readonly idleTimeoutMs: number;
  readonly sslMode: PostgresSslMode;
  /** `ssl` value handed to `pg`: `false`, or the TLS options derived from the ssl parameters. */
  readonly ssl: false | TlsOptions;
  readonly applicationName: string;
  /** Raw `options` startup parameter (e.g. `-c DateStyle=ISO`), passed through when given. */
  readonly options: string | undefined;
  /** Require SCRAM channel binding (`channel_binding=require`). */
  readonly channelBinding: boolean;
}

/** Explicit settings; they take precedence over URL parameters, which take precedence over the environment. */
export type PostgresSettingsOverrides = Partial<Omit<PostgresSettings, 'ssl' | 'sslMode'>> & {
  readonly sslMode?: PostgresSslMode;
  /** TLS options merged over the ones derived from `sslMode`. */
  readonly ssl?: TlsOptions;
};

export const POSTGRES_DEFAULTS = {
  poolMax: 10,
  statementTimeoutMs: 5_000,
  connectTimeoutMs: 5_000,
  idleTimeoutMs: 10_000,
  applicationName: 'entity-gen',
} as const;

const URL_PARAMETERS = new Set([
  'schema',
  'pool_max',
  'statement_timeout',
  'connect_timeout',
  'connect_timeout_ms',
  'idle_timeout_ms',
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'application_name',
  'options',
  'channel_binding',
  'host',
  'port',
  'user',
  'password',
  'dbname',
]);

/** True when the URL names PostgreSQL (`postgres://` or `postgresql://`). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(url);
}

/** A configuration problem in a PostgreSQL URL or environment variable. */
export class PostgresConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PostgresConfigError';
  }
}

/**
 * Parses a `postgres://` / `postgresql://` URL and the driver's environment variables in `env`
 * (none by default; a generated service passes `process.env`) into settings (grammar: see
 * `index.ts`). Throws `PostgresConfigError` on a malformed URL, an unknown
 * parameter or a bad value; the message never contains the password.
 */
export function parsePostgresUrl(
  url: string,
  env: Environment = {},
  overrides: PostgresSettingsOverrides = {},
): PostgresSettings {
  if (!isPostgresUrl(url)) {
    throw new PostgresConfigError('A PostgreSQL URL starts with postgres:// or postgresql://');
  }
  // The query holds this driver's parameters, checked here; everything before it (user,
  // password, host, port, database) is read by pg's own parser, so a URL means here what it
  // means to pg: percent-escapes, IPv6 brackets, a socket folder as an escaped host.
  const queryStart = url.indexOf('?');
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(
    queryStart === -1 ? '' : url.slice(queryStart + 1),
  )) {
    if (!URL_PARAMETERS.has(name)) {
      throw new PostgresConfigError(
        `Unknown PostgreSQL URL parameter "${name}" (known: ${[...URL_PARAMETERS].join(', ')})`,
      );
    }
    params.set(name, value);
  }
  let parts: ConnectionOptions;
  try {
    parts = parseConnectionString(queryStart === -1 ? url : url.slice(0, queryStart));
  } catch {
    // The parser's own message may quote the URL, password included.
    throw new PostgresConfigError('The PostgreSQL URL is malformed');
  }
  const part = (value: string | null | undefined): string | undefined =>
    value === null || value === undefined || value === '' ? undefined : value;

  const fromEnv = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const integer = (value: string | undefined, what: string, min: number): number | undefined => {
    if (value === undefined) return undefined;
    if (
      !/^\d+$/.test(value.trim()) ||
      Number(value) < min ||
      !Number.isSafeInteger(Number(value))
    ) {
      throw new PostgresConfigError(`${what} must be an integer ≥ ${min}, got "${value}"`);
    }
    return Number(value);
  };

  const portText = params.get('port') ?? part(parts.port);
  const connectTimeoutSeconds = integer(
    params.get('connect_timeout'),
    'connect_timeout (seconds)',
    0,
  );

  const sslModeText =
    overrides.sslMode ?? params.get('sslmode') ?? fromEnv('PGSSLMODE') ?? 'disable';
  if (!['disable', 'require', 'verify-ca', 'verify-full'].includes(sslModeText)) {
    throw new PostgresConfigError(
      `sslmode "${sslModeText}" is not supported; use disable, require, verify-ca or verify-full`,
    );
  }
  const sslMode = sslModeText as PostgresSslMode;

  const schema = overrides.schema ?? params.get('schema') ?? fromEnv('PGSCHEMA');
  if (schema !== undefined && (schema === '' || schema.includes('\0'))) {
    throw new PostgresConfigError('schema must be a non-empty name');
  }

  const channelBindingText = params.get('channel_binding') ?? 'prefer';
  if (!['disable', 'prefer', 'require'].includes(channelBindingText)) {
    throw new PostgresConfigError(`channel_binding must be disable, prefer or require`);
  }

  const settings: PostgresSettings = {
    host: overrides.host ?? params.get('host') ?? part(parts.host),
    port: overrides.port ?? integer(portText, 'port', 1),
    user: overrides.user ?? params.get('user') ?? part(parts.user),
    password: overrides.password ?? params.get('password') ?? part(parts.password),
    database: overrides.database ?? params.get('dbname') ?? part(parts.database),
    schema,
    poolMax:
      overrides.poolMax ??
      integer(params.get('pool_max'), 'pool_max', 1) ??
      integer(fromEnv('PGPOOL_MAX'), 'PGPOOL_MAX', 1) ??
      POSTGRES_DEFAULTS.poolMax,
    statementTimeoutMs:
      overrides.statementTimeoutMs ??
      integer(params.get('statement_timeout'), 'statement_timeout (ms)', 0) ??
      integer(fromEnv('PG_STATEMENT_TIMEOUT_MS'), 'PG_STATEMENT_TIMEOUT_MS', 0) ??
      integer(fromEnv('QUERY_TIMEOUT_MS'), 'QUERY_TIMEOUT_MS', 1) ??
      POSTGRES_DEFAULTS.statementTimeoutMs,
    connectTimeoutMs:
      overrides.connectTimeoutMs ??
      integer(params.get('connect_timeout_ms'), 'connect_timeout_ms', 1) ??
      (connectTimeoutSeconds === undefined || connectTimeoutSeconds === 0
        ? undefined
        : connectTimeoutSeconds * 1000) ??
      integer(fromEnv('PG_CONNECT_TIMEOUT_MS'), 'PG_CONNECT_TIMEOUT_MS', 1) ??
      POSTGRES_DEFAULTS.connectTimeoutMs,
    idleTimeoutMs:
      overrides.idleTimeoutMs ??
      integer(params.get('idle_timeout_ms'), 'idle_timeout_ms', 0) ??
      integer(fromEnv('PGPOOL_IDLE_TIMEOUT_MS'), 'PGPOOL_IDLE_TIMEOUT_MS', 0) ??
      POSTGRES_DEFAULTS.idleTimeoutMs,
    sslMode,
    ssl: sslOptions(sslMode, params, overrides.ssl),
    applicationName:
      overrides.applicationName ??
      params.get('application_name') ??
      POSTGRES_DEFAULTS.applicationName,
    options: overrides.options ?? params.get('options'),
    channelBinding: overrides.channelBinding ?? channelBindingText === 'require',
  };
  return settings;
}

function sslOptions(
  mode: PostgresSslMode,
  params: ReadonlyMap<string, string>,
  extra: TlsOptions | undefined,
): false | TlsOptions {
  if (mode === 'disable') return false;
  const read = (name: string): string | undefined => {
    const file = params.get(name);
    if (file === undefined) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (error) {
      throw new PostgresConfigError(
        `Cannot read ${name} file ${file}: ${(error as Error).message}`,
      );
    }
  };
  const options: { -readonly [K in keyof TlsOptions]: TlsOptions[K] } = {};
  const ca = read('sslrootcert');
  const cert = read('sslcert');
  const key = read('sslkey');
  if (ca !== undefined) options.ca = ca;
  if (cert !== undefined) options.cert = cert;
  if (key !== undefined) options.key = key;
  switch (mode) {
    case 'require':
      // libpq semantics: encrypted, certificate not checked (unless a root certificate is given,
      // which makes it behave like verify-ca).
      if (ca === undefined) options.rejectUnauthorized = false;
      else options.checkServerIdentity = () => undefined;
      break;
    case 'verify-ca':
      if (ca === undefined) {
        throw new PostgresConfigError(
          'sslmode=verify-ca needs sslrootcert=<file of the CA certificate>',
        );
      }
      options.checkServerIdentity = () => undefined;
      break;
    case 'verify-full':
      options.rejectUnauthorized = true;
      break;
  }
  return { ...options, ...extra };
}

/** The settings without secrets, for logs and error messages. */
export function describeSettings(settings: PostgresSettings): string {
  const host = settings.host ?? 'localhost';
  const port = settings.port ?? 5432;
  return `postgres://${settings.user === undefined ? '' : `${settings.user}@`}${host}:${port}/${
    settings.database ?? ''
  }${settings.schema === undefined ? '' : ` (schema ${settings.schema})`}`;
}

/** Options of `PostgresDriver`; explicit values win over URL parameters, which win over the environment. */
export interface PostgresDriverOptions extends PostgresSettingsOverrides {
  /** `postgres://` / `postgresql://` URL (grammar in `index.ts`). */
  readonly url?: string;
  /**
   * Environment read for `DATABASE_URL`, `PGPOOL_MAX` & co.; default none (a generated service
   * passes `process.env`). `pg` itself still falls back to `PGHOST`, `PGUSER` & co.
   */
  readonly env?: Environment;
  /**
   * Called with errors of idle pooled connections (e.g. the server restarted). The pool drops
   * such connections and opens new ones on demand; these errors never reach a request and never
   * crash the process. Default: ignored.
   */
  readonly onIdleError?: (error: Error) => void;
  /** Further `pg.Pool` settings (merged last; for tests and special set-ups). */
  readonly pool?: Omit<pg.PoolConfig, 'types'>;
}

/** True for a complete settings object (as returned by `parsePostgresUrl`). */
function isSettings(config: PostgresSettings | PostgresDriverOptions): config is PostgresSettings {
  const required: (keyof PostgresSettings)[] = [
    'poolMax',
    'statementTimeoutMs',
    'connectTimeoutMs',
    'idleTimeoutMs',
    'sslMode',
    'ssl',
    'applicationName',
    'channelBinding',
  ];
  return required.every((key) => key in config) && !('url' in config);
}

/**
 * The settings and options of `new PostgresDriver(config, extra)`: a URL (its parameters only: no
 * environment is read), settings returned by `parsePostgresUrl`, or options (whose `url`
 * defaults to `DATABASE_URL` of their `env`, then to pg's environment defaults).
 */
export function resolveDriverOptions(
  config: string | PostgresSettings | PostgresDriverOptions,
  extra: Pick<PostgresDriverOptions, 'onIdleError' | 'pool'>,
): { readonly settings: PostgresSettings; readonly options: PostgresDriverOptions } {
  if (typeof config === 'string') {
    return { settings: parsePostgresUrl(config), options: { ...extra, url: config } };
  }
  if (isSettings(config)) return { settings: config, options: extra };
  const options = { ...extra, ...config };
  const env = options.env ?? {};
  return {
    settings: parsePostgresUrl(options.url ?? env['DATABASE_URL'] ?? 'postgres://', env, options),
    options,
  };
}
