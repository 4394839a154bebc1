/** The settings of change events (SPEC §9), from the environment (docs/configuration.md). */
import { envInteger, type Environment } from '../env.js';

export interface EventSettings {
  /** Whether writes append change events and `/events` serves them (`EVENTS`, default on). */
  readonly enabled: boolean;
  /** How long changes are kept for resuming clients (`EVENTS_RETENTION`, default 7 days). */
  readonly retentionMs: number;
  /** Interval of the keep-alive comment on every stream (`EVENTS_KEEPALIVE_MS`, default 15 s). */
  readonly keepAliveMs: number;
  /**
   * Bytes a subscriber may leave unread before it is disconnected (`EVENTS_BUFFER_BYTES`, default
   * 1 MiB); it reconnects and resumes from its last event.
   */
  readonly bufferBytes: number;
  /**
   * How often the outbox is read without a wake-up, for changes of other processes on a SQLite
   * file and as the safety net of PostgreSQL's notifications (`EVENTS_POLL_MS`, default 500).
   */
  readonly pollMs: number;
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = {
  enabled: true,
  retentionMs: 7 * 24 * 3600 * 1000,
  keepAliveMs: 15_000,
  bufferBytes: 1024 * 1024,
  pollMs: 500,
};

const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * A duration like `7d`, `12h`, `30m`, `90s` or `500ms` in milliseconds; `undefined` when `text`
 * is not one (a bare number is not: its unit would be a guess).
 */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+)\s*(ms|s|m|h|d)$/i.exec(text.trim());
  if (match === null) return undefined;
  const value = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** The settings the variables of `env` give; an invalid value is an error naming its variable. */
export function eventSettingsFromEnv(env: Environment): EventSettings {
  const flag = (env['EVENTS'] ?? '').trim().toLowerCase();
  if (flag !== '' && flag !== 'on' && flag !== 'off')
    throw new Error(`EVENTS must be on or off, not ${JSON.stringify(env['EVENTS'])}`);
  const retention = env['EVENTS_RETENTION'];
  let retentionMs = DEFAULT_EVENT_SETTINGS.retentionMs;
  if (retention !== undefined && retention.trim() !== '') {
    const parsed = parseDuration(retention);
    if (parsed === undefined)
      throw new Error(
        `EVENTS_RETENTION must be a duration like 7d, 12h, 30m or 90s, not ${JSON.stringify(retention)}`,
      );
    retentionMs = parsed;
  }
  return {
    enabled: flag !== 'off',
    retentionMs,
    keepAliveMs: envInteger(env, 'EVENTS_KEEPALIVE_MS', DEFAULT_EVENT_SETTINGS.keepAliveMs, {
      min: 10,
    }),
    bufferBytes: envInteger(env, 'EVENTS_BUFFER_BYTES', DEFAULT_EVENT_SETTINGS.bufferBytes, {
      min: 1024,
    }),
    pollMs: envInteger(env, 'EVENTS_POLL_MS', DEFAULT_EVENT_SETTINGS.pollMs, { min: 10 }),
  };
}
