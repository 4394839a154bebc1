import { describe, expect, it } from 'vitest';
import {
  DEFAULT_EVENT_SETTINGS,
  eventSettingsFromEnv,
  parseDuration,
} from '../../runtime/src/events/settings.js';

describe('parseDuration', () => {
  it.each([
    ['7d', 7 * 86_400_000],
    ['12h', 12 * 3_600_000],
    ['30m', 1_800_000],
    ['90s', 90_000],
    ['500ms', 500],
    [' 2 H ', 7_200_000],
  ])('%s → %s ms', (text, want) => {
    expect(parseDuration(text)).toBe(want);
  });

  it.each([['604800'], ['7 days'], ['1.5h'], ['-1d'], ['0s'], ['d'], ['']])(
    '%s is not a duration',
    (text) => {
      expect(parseDuration(text)).toBeUndefined();
    },
  );
});

describe('eventSettingsFromEnv', () => {
  it('has the documented defaults', () => {
    expect(eventSettingsFromEnv({})).toEqual(DEFAULT_EVENT_SETTINGS);
    expect(DEFAULT_EVENT_SETTINGS).toEqual({
      enabled: true,
      retentionMs: 7 * 86_400_000,
      keepAliveMs: 15_000,
      bufferBytes: 1_048_576,
      pollMs: 500,
    });
  });

  it('reads every variable', () => {
    expect(
      eventSettingsFromEnv({
        EVENTS: 'OFF',
        EVENTS_RETENTION: '36h',
        EVENTS_KEEPALIVE_MS: '1000',
        EVENTS_BUFFER_BYTES: '65536',
        EVENTS_POLL_MS: '250',
      }),
    ).toEqual({
      enabled: false,
      retentionMs: 36 * 3_600_000,
      keepAliveMs: 1000,
      bufferBytes: 65_536,
      pollMs: 250,
    });
    expect(eventSettingsFromEnv({ EVENTS: 'on' }).enabled).toBe(true);
  });

  it.each([
    [{ EVENTS: 'no' }, 'EVENTS must be on or off, not "no"'],
    [
      { EVENTS_RETENTION: '604800' },
      'EVENTS_RETENTION must be a duration like 7d, 12h, 30m or 90s, not "604800"',
    ],
    [
      { EVENTS_KEEPALIVE_MS: '5' },
      'EVENTS_KEEPALIVE_MS must be an integer from 10 to 9007199254740991, not "5"',
    ],
    [
      { EVENTS_BUFFER_BYTES: '1MB' },
      'EVENTS_BUFFER_BYTES must be an integer from 1024 to 9007199254740991, not "1MB"',
    ],
  ])('%o is an error naming the variable', (env, message) => {
    expect(() => eventSettingsFromEnv(env)).toThrow(message);
  });
});
