import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OUTPUT, ROOT } from '../helpers/generate.js';

const WORK = join(OUTPUT, 'regen-dev');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** A running `entity-gen dev` with everything it printed so far. */
class DevProcess {
  stdout = '';
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Waits until `test` holds for the output, failing with the output after `ms`. */
  async until(what: string, test: () => boolean, ms = 60_000): Promise<void> {
    const started = Date.now();
    while (!test()) {
      if (Date.now() - started > ms || this.child.exitCode !== null) {
        throw new Error(`dev: no ${what}\n--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  count(text: string): number {
    return this.stdout.split(text).length - 1;
  }
}

let dev: DevProcess | undefined;
afterAll(() => {
  dev?.child.kill('SIGKILL');
});

describe('entity-gen dev', () => {
  it('starts the service, restarts it on a schema change, survives an invalid edit, rebuilds on a hook change, stops on SIGTERM', async () => {
    await rm(WORK, { recursive: true, force: true });
    await mkdir(WORK, { recursive: true });
    const schema = join(WORK, 'shop.yaml');
    const original = await readFile(join(ROOT, 'fixtures/shop/shop.yaml'), 'utf8');
    await writeFile(schema, original);
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1' };
    delete env['DATABASE_URL']; // the default: sqlite:./data/dev.db inside the output folder
    dev = new DevProcess(
      spawn(process.execPath, [CLI, 'dev', 'shop.yaml', '-o', 'svc'], {
        cwd: WORK,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const running = dev;
    const url = `http://127.0.0.1:${port}`;

    // 1. Generated, built and started.
    await running.until('first start', () => running.count('listening on') === 1);
    expect(running.stdout).toContain('[entity-gen dev] generated: 24 created');
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(existsSync(join(WORK, 'svc', 'data', 'dev.db'))).toBe(true);
    const before = await fetch(`${url}/data/product`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { code: 'p0', name: 'Old', price: '1', color: 'red' } }),
    });
    expect(before.status).toBe(400); // no such field yet

    // 2. A new field: regenerated (with its migration), rebuilt, restarted.
    const withColor = original.replace(
      '    - name: stock\n',
      '    - name: color\n      type: STRING\n    - name: stock\n',
    );
    await writeFile(schema, withColor);
    await running.until('restart', () => running.count('listening on') === 2);
    expect(running.stdout).toContain('[entity-gen dev] restarting the service');
    const posted = await fetch(`${url}/data/product`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { code: 'p1', name: 'Hammer', price: '9.5', color: 'red' } }),
    });
    expect(posted.status).toBe(200);
    expect(await posted.json()).toMatchObject({ status: 'success', data: { color: 'red' } });

    // 3. An invalid edit: diagnostics printed, the running service kept.
    await writeFile(
      schema,
      `${await readFile(schema, 'utf8')}    - name: broken\n      type: STRNG\n`,
    );
    await running.until('diagnostics', () =>
      running.stdout.includes('the running service is kept'),
    );
    expect(running.stderr).toMatch(/^shop\.yaml:\d+:\d+: .*STRNG.* \(UNKNOWN_TYPE\)$/m);
    const stillThere = await fetch(`${url}/data/product/p1`);
    expect(stillThere.status).toBe(200);
    expect(running.count('listening on')).toBe(2);

    // 4. The schema fixed again generates nothing new; a change of the user's hook file rebuilds
    // and restarts the service with the hook in force.
    await writeFile(schema, withColor);
    await running.until('nothing changed', () => running.stdout.includes('nothing changed'));
    expect(running.count('listening on')).toBe(2);
    const hookFile = join(WORK, 'svc', 'src', 'hooks', 'category.ts');
    const hook = await readFile(hookFile, 'utf8');
    expect(hook).toContain('  // afterInsert(record, ctx) {},');
    await writeFile(
      hookFile,
      hook.replace(
        '  // afterInsert(record, ctx) {},',
        "  afterInsert(_record, ctx) {\n    ctx.set('X-Hooked', 'yes');\n  },",
      ),
    );
    await running.until('restart after the hook change', () => running.count('listening on') === 3);
    const hooked = await fetch(`${url}/data/category`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { name: 'tools' } }),
    });
    expect(hooked.status).toBe(200);
    expect(hooked.headers.get('x-hooked')).toBe('yes');

    // 5. SIGTERM stops the service and dev, exit code 0.
    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    expect(running.stdout).toContain('[entity-gen dev] stopped');
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    dev = undefined;
  }, 120_000);

  it('with no arguments repeats the recorded generation: same schema, REST config and driver, same output folder', async () => {
    const work = join(OUTPUT, 'regen-dev-recorded');
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    const schema = join(work, 'shop.yaml');
    const original = await readFile(join(ROOT, 'fixtures/shop/shop.yaml'), 'utf8');
    await writeFile(schema, original);
    await writeFile(
      join(work, 'rest.yaml'),
      await readFile(join(ROOT, 'fixtures/shop/restconfig.yaml'), 'utf8'),
    );
    // A generation with options, into the default folder ./service.
    const generated = spawnSync(
      process.execPath,
      [CLI, 'generate', 'shop.yaml', '--rest-config', 'rest.yaml', '--driver', 'sqlite'],
      { cwd: work, encoding: 'utf8' },
    );
    expect(generated.status, generated.stderr).toBe(0);
    const manifestPath = join(work, 'service', '.entity-gen', 'manifest.json');
    const manifest = await readFile(manifestPath, 'utf8');

    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1' };
    delete env['DATABASE_URL'];
    dev = new DevProcess(
      spawn(process.execPath, [CLI, 'dev'], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const running = dev;
    const url = `http://127.0.0.1:${port}`;

    // 1. It watches the recorded files and finds the folder up to date: had it dropped the REST
    // configuration or the driver, routes or package.json would have been rewritten.
    await running.until('first start', () => running.count('listening on') === 1);
    expect(running.stdout).toContain(
      '[entity-gen dev] watching shop.yaml, rest.yaml; the service runs from service. Ctrl-C stops.',
    );
    expect(running.stdout).toMatch(
      /\[entity-gen dev\] generated: 0 created, 0 updated, 0 deleted, \d+ unchanged/,
    );
    // The REST configuration is in force: CATEGORY allows only GET_BYID and NEW.
    const list = await fetch(`${url}/data/category`);
    expect(list.status).toBe(403);
    expect(await list.json()).toMatchObject({
      status: 'error',
      error: { reason: 'Method GET_LIST not allowed for Entity CATEGORY' },
    });

    // 2. A change of the recorded schema file is seen: regenerated with the same options.
    const withColor = original.replace(
      '    - name: stock\n',
      '    - name: color\n      type: STRING\n    - name: stock\n',
    );
    await writeFile(schema, withColor);
    await running.until('restart', () => running.count('listening on') === 2);
    const posted = await fetch(`${url}/data/product`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ data: { code: 'p1', name: 'Hammer', price: '9.5', color: 'red' } }),
    });
    expect(posted.status).toBe(200);
    expect((await fetch(`${url}/data/category`)).status).toBe(403);
    const after = JSON.parse(await readFile(manifestPath, 'utf8')) as { invocation: unknown };
    expect(after.invocation).toEqual((JSON.parse(manifest) as { invocation: unknown }).invocation);
    expect(after.invocation).toEqual({
      schemas: ['../shop.yaml'],
      restConfig: '../rest.yaml',
      driver: 'sqlite',
    });
    const servicePackage = JSON.parse(
      await readFile(join(work, 'service', 'package.json'), 'utf8'),
    ) as { dependencies: Record<string, string> };
    expect(Object.keys(servicePackage.dependencies)).not.toContain('pg');

    running.child.kill('SIGTERM');
    expect(await running.exited).toBe(0);
    dev = undefined;
  }, 120_000);
});
