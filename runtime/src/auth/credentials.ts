/**
 * Credentials (SPEC §8): JWT bearer tokens verified with `jose` (an HS256 secret, a PEM public
 * key, or a JWKS URL whose keys are fetched, cached and re-fetched when a token names an unknown
 * key), and API keys from a file of SHA-256 hashes, compared in constant time. Configured from the
 * environment by `authFromEnv`; a misconfiguration stops the service at start.
 */
import { createHash, createPublicKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  createRemoteJWKSet,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { AuthenticationRequiredError, type Principal } from './access.js';

type Env = Readonly<Record<string, string | undefined>>;

/** One API key: its name (the principal's subject), the SHA-256 of the key, its roles. */
export interface ApiKey {
  readonly name: string;
  /** 32 bytes. */
  readonly sha256: Buffer;
  readonly roles: readonly string[];
}

/** How JWT signatures are checked. */
export type JwtKey =
  | { readonly kind: 'secret'; readonly secret: Uint8Array }
  | { readonly kind: 'public-key'; readonly key: KeyObject; readonly algorithms: readonly string[] }
  | { readonly kind: 'jwks'; readonly url: URL; readonly cooldownMs?: number };

export interface JwtSettings {
  readonly key: JwtKey;
  /** `iss` must equal it, when set. */
  readonly issuer?: string;
  /** `aud` must contain it, when set. */
  readonly audience?: string;
  /** Claim holding the roles (a list of strings); a dotted path reaches into objects. */
  readonly rolesClaim: string;
  /** Leeway for `exp` and `nbf`, in seconds. */
  readonly clockToleranceSeconds: number;
}

export interface AuthSettings {
  readonly jwt?: JwtSettings;
  readonly apiKeys?: readonly ApiKey[];
}

/** A JWT has three base64url parts; anything else in `Authorization: Bearer` is an API key. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/** The algorithms a public key of each type may verify. */
function algorithmsOf(key: KeyObject): string[] {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      return curve === 'secp384r1' ? ['ES384'] : curve === 'secp521r1' ? ['ES512'] : ['ES256'];
    }
    case 'ed25519':
      return ['EdDSA', 'Ed25519'];
    default:
      throw new Error(
        `JWT_PUBLIC_KEY holds a ${key.asymmetricKeyType ?? 'unknown'} key, which cannot verify JWTs`,
      );
  }
}

/** Turns credentials into principals; shared by every request of a service. */
export class Authenticator {
  private readonly jwksKey: JWTVerifyGetKey | undefined;

  constructor(readonly settings: AuthSettings = {}) {
    const key = settings.jwt?.key;
    this.jwksKey =
      key?.kind === 'jwks'
        ? createRemoteJWKSet(key.url, {
            ...(key.cooldownMs === undefined ? {} : { cooldownDuration: key.cooldownMs }),
          })
        : undefined;
  }

  /** Whether any kind of credential can be accepted at all. */
  get configured(): boolean {
    return this.settings.jwt !== undefined || (this.settings.apiKeys?.length ?? 0) > 0;
  }

  /**
   * The principal of a request's credentials: `Authorization: Bearer <jwt or API key>` or
   * `X-API-Key: <key>`. No credentials: `undefined`. Credentials that do not verify: a 401.
   */
  async authenticate(authorization: string, apiKeyHeader: string): Promise<Principal | undefined> {
    if (apiKeyHeader !== '') return this.apiKey(apiKeyHeader);
    if (authorization === '') return undefined;
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (match === null) throw new AuthenticationRequiredError(true);
    const token = match[1]!;
    return JWT_SHAPE.test(token) ? this.jwt(token) : this.apiKey(token);
  }

  private apiKey(key: string): Principal {
    const hash = createHash('sha256').update(key, 'utf8').digest();
    let found: ApiKey | undefined;
    // Every entry is compared, in constant time, whether or not one matched already.
    for (const entry of this.settings.apiKeys ?? []) {
      if (timingSafeEqual(hash, entry.sha256) && found === undefined) found = entry;
    }
    if (found === undefined) throw new AuthenticationRequiredError(true);
    return { subject: found.name, roles: found.roles, via: 'api-key' };
  }

  private async jwt(token: string): Promise<Principal> {
    const settings = this.settings.jwt;
    if (settings === undefined) throw new AuthenticationRequiredError(true);
    const options = {
      ...(settings.issuer === undefined ? {} : { issuer: settings.issuer }),
      ...(settings.audience === undefined ? {} : { audience: settings.audience }),
      clockTolerance: settings.clockToleranceSeconds,
    };
    let payload: JWTPayload;
    try {
      const key = settings.key;
      if (key.kind === 'secret') {
        payload = (await jwtVerify(token, key.secret, { ...options, algorithms: ['HS256'] }))
          .payload;
      } else if (key.kind === 'public-key') {
        payload = (await jwtVerify(token, key.key, { ...options, algorithms: [...key.algorithms] }))
          .payload;
      } else {
        payload = (await jwtVerify(token, this.jwksKey!, options)).payload;
      }
    } catch (error) {
      if (error instanceof joseErrors.JOSEError || error instanceof TypeError)
        throw new AuthenticationRequiredError(true);
      throw error;
    }
    if (typeof payload.sub !== 'string' || payload.sub === '')
      throw new AuthenticationRequiredError(true);
    return { subject: payload.sub, roles: rolesOf(payload, settings.rolesClaim), via: 'jwt' };
  }
}

/** The roles claim: a list of strings (a single string counts as one role), else none. */
function rolesOf(payload: JWTPayload, claim: string): string[] {
  let value: unknown = payload;
  for (const part of claim.split('.')) {
    value =
      typeof value === 'object' && value !== null && Object.hasOwn(value, part)
        ? (value as Record<string, unknown>)[part]
        : undefined;
  }
  if (typeof value === 'string') return [value];
  return Array.isArray(value)
    ? value.filter((role): role is string => typeof role === 'string')
    : [];
}

/**
 * Reads the credential settings from the environment (docs/security.md):
 * `JWT_SECRET` | `JWT_PUBLIC_KEY` | `JWT_JWKS_URL` (at most one), `JWT_ISSUER`, `JWT_AUDIENCE`,
 * `JWT_ROLES_CLAIM` (default `roles`), `JWT_CLOCK_TOLERANCE_SECONDS` (default 0),
 * `JWT_JWKS_COOLDOWN_MS`, and `API_KEYS_FILE`. Throws an error with a one-line reason naming the
 * variable when the configuration cannot work.
 */
export async function authFromEnv(env: Env): Promise<Authenticator> {
  const value = (name: string): string | undefined => {
    const raw = env[name];
    return raw === undefined || raw.trim() === '' ? undefined : raw;
  };
  const secret = value('JWT_SECRET');
  const publicKey = value('JWT_PUBLIC_KEY');
  const jwksUrl = value('JWT_JWKS_URL');
  const given = [
    ['JWT_SECRET', secret],
    ['JWT_PUBLIC_KEY', publicKey],
    ['JWT_JWKS_URL', jwksUrl],
  ].filter(([, v]) => v !== undefined);
  if (given.length > 1) {
    throw new Error(
      `${given.map(([name]) => name).join(' and ')} are both set; set only one way to verify JWTs`,
    );
  }
  let key: JwtKey | undefined;
  if (secret !== undefined) {
    if (Buffer.byteLength(secret) < 32)
      throw new Error('JWT_SECRET must be at least 32 bytes long (HS256 needs a strong secret)');
    key = { kind: 'secret', secret: new TextEncoder().encode(secret) };
  } else if (publicKey !== undefined) {
    let parsed: KeyObject;
    try {
      parsed = createPublicKey(publicKey.replace(/\\n/g, '\n'));
    } catch {
      throw new Error('JWT_PUBLIC_KEY is not a PEM public key (-----BEGIN PUBLIC KEY-----…)');
    }
    key = { kind: 'public-key', key: parsed, algorithms: algorithmsOf(parsed) };
  } else if (jwksUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(jwksUrl);
    } catch {
      throw new Error(`JWT_JWKS_URL is not a URL: ${JSON.stringify(jwksUrl)}`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error(`JWT_JWKS_URL must be an http(s) URL, not ${url.protocol}`);
    const cooldown = integer(env, 'JWT_JWKS_COOLDOWN_MS');
    key = { kind: 'jwks', url, ...(cooldown === undefined ? {} : { cooldownMs: cooldown }) };
  }
  for (const name of ['JWT_ISSUER', 'JWT_AUDIENCE']) {
    if (key === undefined && value(name) !== undefined)
      throw new Error(
        `${name} is set but no JWT key is: set JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URL`,
      );
  }
  const issuer = value('JWT_ISSUER');
  const audience = value('JWT_AUDIENCE');
  const jwt: JwtSettings | undefined =
    key === undefined
      ? undefined
      : {
          key,
          ...(issuer === undefined ? {} : { issuer }),
          ...(audience === undefined ? {} : { audience }),
          rolesClaim: value('JWT_ROLES_CLAIM') ?? 'roles',
          clockToleranceSeconds: integer(env, 'JWT_CLOCK_TOLERANCE_SECONDS') ?? 0,
        };
  const keysFile = value('API_KEYS_FILE');
  const apiKeys = keysFile === undefined ? undefined : await readApiKeys(keysFile);
  return new Authenticator({
    ...(jwt === undefined ? {} : { jwt }),
    ...(apiKeys === undefined ? {} : { apiKeys }),
  });
}

function integer(env: Env, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw new Error(`${name} must be a whole number, not ${JSON.stringify(raw)}`);
  return Number(raw.trim());
}

/**
 * The API keys file: a JSON list of `{"name", "sha256", "roles"}`, `sha256` being the hex SHA-256
 * of the key (the key itself is never stored). Any problem is an error naming the entry.
 */
export async function readApiKeys(file: string): Promise<ApiKey[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new Error(`API_KEYS_FILE ${file} cannot be read (${code})`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // The parser's message may quote the file's first lines; the reason stays one line.
    const detail = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
    throw new Error(`API_KEYS_FILE ${file} is not JSON: ${detail}`);
  }
  if (!Array.isArray(parsed))
    throw new Error(`API_KEYS_FILE ${file} must hold a JSON list of {"name", "sha256", "roles"}`);
  const names = new Set<string>();
  return parsed.map((entry: unknown, index) => {
    const where = `API_KEYS_FILE ${file}: entry ${index + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new Error(`${where} must be an object with name, sha256 and roles`);
    const { name, sha256, roles } = entry as Record<string, unknown>;
    if (typeof name !== 'string' || name === '') throw new Error(`${where} has no "name"`);
    if (names.has(name)) throw new Error(`${where} repeats the name ${JSON.stringify(name)}`);
    names.add(name);
    if (typeof sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(sha256))
      throw new Error(`${where} (${name}) needs "sha256": the 64 hex digits of the key's SHA-256`);
    if (!Array.isArray(roles) || !roles.every((role) => typeof role === 'string' && role !== ''))
      throw new Error(`${where} (${name}) needs "roles": a list of role names`);
    return { name, sha256: Buffer.from(sha256, 'hex'), roles: roles as string[] };
  });
}
