/**
 * `HISTORY_RETENTION` (SPEC §13): how long the versions of `history` tables are kept. Default
 * forever; with a duration, a running service deletes, now and then, the versions written before
 * it, except the newest version of each record (a record's history never becomes empty).
 */
import type { StorageDriver } from './driver.js';
import type { Environment } from './env.js';
import { parseDuration } from './events/settings.js';
import type { Logger } from './logger.js';

/** The longest wait between two trims. */
const MAX_TRIM_INTERVAL_MS = 3_600_000;

/** The retention `HISTORY_RETENTION` sets, in ms; `undefined`: forever (absent, or `forever`). */
export function historyRetentionFromEnv(env: Environment): number | undefined {
  const text = (env['HISTORY_RETENTION'] ?? '').trim();
  if (text === '' || text.toLowerCase() === 'forever') return undefined;
  const parsed = parseDuration(text);
  if (parsed === undefined)
    throw new Error(
      `HISTORY_RETENTION must be forever or a duration like 365d, 12h, 30m or 90s, not ${JSON.stringify(env['HISTORY_RETENTION'])}`,
    );
  return parsed;
}

/**
 * Trims the history of `driver` to `retentionMs` now and then (every quarter of the retention, at
 * most hourly); returns the function that stops it.
 */
export function startHistoryTrimming(
  driver: StorageDriver,
  retentionMs: number,
  logger: Logger,
  now: () => number = Date.now,
): () => void {
  const trimHistory = driver.trimHistory;
  if (trimHistory === undefined) return () => undefined;
  let failing = false;
  const trim = async (): Promise<void> => {
    try {
      const removed = await trimHistory.call(driver, now() - retentionMs);
      if (removed > 0) logger.debug({ removed }, 'history: trimmed old versions');
      failing = false;
    } catch (error) {
      if (!failing) logger.warn({ err: error }, 'history: trimming failed; retrying');
      failing = true;
    }
  };
  const timer = setInterval(
    () => void trim(),
    Math.min(MAX_TRIM_INTERVAL_MS, Math.max(10, retentionMs / 4)),
  );
  timer.unref();
  void trim();
  return () => clearInterval(timer);
}
