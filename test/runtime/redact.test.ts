/** DATABASE_URL as the logs show it: passwords never appear, wherever the URL carries them. */
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../runtime/src/open.js';

describe('redactUrl', () => {
  it.each<[string, string, string]>([
    ['no password', 'postgres://app@db:5432/shop', 'postgres://app@db:5432/shop'],
    ['a password', 'postgres://app:s3cret@db:5432/shop', 'postgres://app:***@db:5432/shop'],
    [
      'a password holding @, : and /',
      'postgres://app:p@ss:w/rd@db:5432/shop',
      'postgres://app:***@db:5432/shop',
    ],
    [
      'a password parameter',
      'postgres://app@db/shop?password=s3cret&sslmode=require',
      'postgres://app@db/shop?password=***&sslmode=require',
    ],
    [
      'an sslpassword parameter after others',
      'postgresql://db/shop?sslmode=verify-full&sslpassword=k3y',
      'postgresql://db/shop?sslmode=verify-full&sslpassword=***',
    ],
    ['SQLite', 'sqlite:./data/service.db', 'sqlite:./data/service.db'],
  ])('%s', (_name, url, shown) => {
    expect(redactUrl(url)).toBe(shown);
    for (const secret of ['s3cret', 'p@ss', 'k3y']) expect(redactUrl(url)).not.toContain(secret);
  });
});
