import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const ROOT = fileURLToPath(new URL('.', import.meta.url));

/**
 * `@entity-gen/runtime` and each of its subpaths resolve to the runtime's TypeScript sources (the
 * `exports` of runtime/package.json with `./dist/x.js` read as `src/x.ts`), for the tests and the
 * generated services they load in-process: coverage of the runtime is real and no build is needed
 * first. Tests that run the build (the CLI binary, compiled services) use the build-check setup.
 */
function runtimeSourceAliases(): { find: RegExp; replacement: string }[] {
  const manifest = JSON.parse(readFileSync(`${ROOT}runtime/package.json`, 'utf8')) as {
    exports: Record<string, string | { default?: string }>;
  };
  return Object.entries(manifest.exports).flatMap(([subpath, target]) => {
    const file = typeof target === 'string' ? target : target.default;
    const compiled = file?.match(/^\.\/dist\/(.+)\.js$/);
    if (compiled === null || compiled === undefined) return [];
    const name = `@entity-gen/runtime${subpath.slice(1)}`.replace(/[/.]/g, '\\$&');
    return [{ find: new RegExp(`^${name}$`), replacement: `${ROOT}runtime/src/${compiled[1]}.ts` }];
  });
}

// Every test file belongs to exactly one project: `unit` is whatever the others leave.
const GOLDEN = ['test/generate/**/*.test.ts'];
const POSTGRES = ['test/**/*.postgres.test.ts', 'test/drivers/postgres*.test.ts'];
const E2E = [
  'test/e2e/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/codemod/**/*.test.ts',
  'test/drivers/**/*.test.ts',
  'test/regen/dev.test.ts',
  'test/regen/hooks.test.ts',
  // The consumer of the typed client and the browser run built code.
  'test/client/**/*.test.ts',
  'test/browser/**/*.test.ts',
];
/** Checks that the build is current (and builds once when it is not): see the file. */
const BUILD = './test/setup/build.ts';

export default defineConfig({
  resolve: { alias: runtimeSourceAliases() },
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: a single worker on a 2-core machine,
    // which left a core idle while the end-to-end files wait on the processes they start (the
    // CLI, tsc, services). One worker per core, and at least two (docs/benchmarks.md, test speed).
    maxWorkers: Math.max(2, availableParallelism()),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...GOLDEN, ...POSTGRES, ...E2E],
        },
      },
      {
        extends: true,
        test: { name: 'golden', include: GOLDEN, globalSetup: [BUILD] },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: E2E,
          exclude: [...configDefaults.exclude, ...POSTGRES],
          globalSetup: [BUILD],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: POSTGRES,
          globalSetup: [BUILD, './test/setup/postgres.ts'],
        },
      },
    ],
    coverage: {
      provider: 'v8',
      include: ['cli/**/*.ts', 'runtime/src/**/*.ts'],
      reporter: ['text-summary', 'html'],
      reportsDirectory: 'coverage',
      // The level of the whole suite with PostgreSQL (as CI runs it), rounded down by about a
      // percent: below it the run fails. Raise them when coverage grows; never lower them.
      thresholds: { statements: 80, branches: 68, functions: 73, lines: 85 },
    },
  },
});
