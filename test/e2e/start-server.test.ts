/**
 * startServer as library code: it reads the environment only from its `env` option (which it
 * hands to the storage driver), shuts down gracefully on SIGTERM/SIGINT, and never ends the
 * process itself: `stopped` tells the caller when the service has stopped.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startServer, type RunningService, type StartOptions } from '@entity-gen/runtime';
import { fixtureNamed, generateFixtureInto, OUTPUT } from '../helpers/generate.js';
import { loadGenerated } from '../helpers/service.js';

let generated: Awaited<ReturnType<typeof loadGenerated>>;
beforeAll(async () => {
  const dir = await generateFixtureInto(fixtureNamed('shop'), 'e2e-start-server');
  generated = await loadGenerated(dir);
});
afterEach(() => {
  vi.unstubAllEnvs();
});

function options(overrides: Partial<StartOptions> = {}): StartOptions {
  return {
    createApp: generated.createApp,
    tables: generated.tables,
    port: 0,
    host: '127.0.0.1',
    databaseUrl: 'sqlite::memory:',
    env: {},
    logLevel: 'silent',
    migrationsDir: join(OUTPUT, 'e2e-start-server', 'no-migrations'),
    ...overrides,
  };
}

/** The signal listeners startServer added (the ones that were not there before). */
function addedListeners(
  signal: NodeJS.Signals,
  before: readonly unknown[],
): ((signal: NodeJS.Signals) => void)[] {
  return (process.listeners(signal) as ((signal: NodeJS.Signals) => void)[]).filter(
    (listener) => !before.includes(listener),
  );
}

describe('startServer', () => {
  it('hands its env to the storage driver and reads nothing from process.env', async () => {
    await expect(startServer(options({ env: { SQLITE_SYNCHRONOUS: 'OFF' } }))).rejects.toThrow(
      /SQLITE_SYNCHRONOUS must be FULL or NORMAL, not "OFF"/,
    );
    vi.stubEnv('SQLITE_SYNCHRONOUS', 'OFF');
    const running = await startServer(options());
    await running.close();
  });

  it('resolves stopped after close() and removes its signal listeners', async () => {
    const before = { term: process.listeners('SIGTERM'), int: process.listeners('SIGINT') };
    const running: RunningService = await startServer(options());
    expect(addedListeners('SIGTERM', before.term)).toHaveLength(1);
    expect(addedListeners('SIGINT', before.int)).toHaveLength(1);
    await running.close();
    await expect(running.stopped).resolves.toBeUndefined();
    expect(running.server.listening).toBe(false);
    expect(addedListeners('SIGTERM', before.term)).toHaveLength(0);
    expect(addedListeners('SIGINT', before.int)).toHaveLength(0);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'shuts down gracefully on %s and leaves the exit to the caller',
    async (signal) => {
      const before = process.listeners(signal);
      const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
        throw new Error(`process.exit(${String(code)}) called`);
      });
      try {
        const running = await startServer(options());
        const [onSignal] = addedListeners(signal, before);
        // The listener itself, as the signal would call it: a real signal would reach the test
        // runner's own process too.
        onSignal!(signal);
        await expect(running.stopped).resolves.toBeUndefined();
        expect(running.server.listening).toBe(false);
        await expect(running.driver.ping()).rejects.toThrow();
        expect(exit).not.toHaveBeenCalled();
      } finally {
        exit.mockRestore();
      }
    },
  );
});
