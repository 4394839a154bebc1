/** Reading a service's configuration from the environment, with errors that name the variable. */

/**
 * Environment variables, e.g. `process.env`. Library code never reads `process.env` itself: the
 * caller (a generated `server.ts`) hands it in.
 */
export type Environment = Readonly<Record<string, string | undefined>>;

type Env = Environment;

/** A text variable; unset or empty means `fallback`. */
export function envString(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value.trim() === '' ? fallback : value;
}

/**
 * An integer variable within `[min, max]`; unset or empty means `fallback`. Anything else — `abc`,
 * `1.5`, `8080x` — is an error naming the variable, never a silent 0 or NaN.
 */
export function envInteger(
  env: Env,
  name: string,
  fallback: number,
  range: { readonly min?: number; readonly max?: number } = {},
): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const text = raw.trim();
  const value = Number(text);
  const min = range.min ?? Number.MIN_SAFE_INTEGER;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`);
  }
  return value;
}
