/**
 * The CLI end of the access file (`--access`, validated in test/access/load.test.ts): its problems
 * are printed as `file:line:col`, the exit code is 1 and nothing is written.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OUTPUT, ROOT } from '../helpers/generate.js';

describe('entity-gen generate --access', () => {
  it.each([
    ['access.yaml', 'entities:\n  ORDER:\n    owner: total\n    GET: [x]\n', '3:12', '4:5'],
    [
      'access.json',
      '{\n  "entities": {\n    "ORDER": {\n      "owner": "total",\n      "GET": ["x"]\n    }\n  }\n}\n',
      '4:16',
      '5:7',
    ],
  ])(
    'reports problems of %s as file:line:col, exits 1 and writes nothing',
    async (file, text, owner, method) => {
      const work = join(OUTPUT, `access-cli-${file.replace('.', '-')}`);
      await rm(work, { recursive: true, force: true });
      await mkdir(work, { recursive: true });
      await writeFile(join(work, file), text);
      const run = await promisify(execFile)(
        process.execPath,
        [
          join(ROOT, 'dist/cli/main.js'),
          'generate',
          join(ROOT, 'fixtures/access/schema.yaml'),
          '-o',
          'svc',
          '--access',
          file,
        ],
        { cwd: work },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      );
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        `${file}:${owner}: owner 'total' of entity ORDER is a DECIMAL field; an owner field holds a subject, so it must be STRING, INTEGER or ENTITY_REF (ACCESS_INVALID_OWNER)\n` +
          `${file}:${method}: Unknown method 'GET' for entity ORDER; use GET_LIST, GET_BYID, NEW, UPDATE, DELETE or owner (ACCESS_UNKNOWN_METHOD)\n` +
          '2 problems found; nothing was written.\n',
      );
      expect(existsSync(join(work, 'svc'))).toBe(false);
    },
  );
});
