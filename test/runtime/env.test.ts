import { describe, expect, it } from 'vitest';
import { envInteger, envString } from '../../runtime/src/env.js';

describe('envInteger', () => {
  it.each([
    ['unset', {}, 8080],
    ['empty', { PORT: '' }, 8080],
    ['blank', { PORT: '  ' }, 8080],
    ['a number', { PORT: '9000' }, 9000],
    ['zero (any free port)', { PORT: '0' }, 0],
  ])('%s → %s', (_name, env, want) => {
    expect(envInteger(env, 'PORT', 8080, { min: 0, max: 65535 })).toBe(want);
  });

  it.each([['abc'], ['80.5'], ['8080x'], ['70000'], ['-1']])(
    '%s is an error naming the variable',
    (value) => {
      expect(() => envInteger({ PORT: value }, 'PORT', 8080, { min: 0, max: 65535 })).toThrow(
        `PORT must be an integer from 0 to 65535, not ${JSON.stringify(value)}`,
      );
    },
  );
});

describe('envString', () => {
  it.each([
    ['unset', {}, 'fallback'],
    ['empty', { HOST: '' }, 'fallback'],
    ['set', { HOST: '127.0.0.1' }, '127.0.0.1'],
  ])('%s → %s', (_name, env, want) => {
    expect(envString(env, 'HOST', 'fallback')).toBe(want);
  });
});
