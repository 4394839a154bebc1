// Servers under test run as child processes of the runner; this module starts them, waits until
// they answer, samples their memory, and stops them (only the processes it started, by pid).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';

const children = new Set();

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node <script>` with `env` (PORT and HOST are set here) and resolves once GET /health
 * answers 200. Returns `{ name, url, pid, stop() }`.
 */
export async function startServer(
  name,
  script,
  env = {},
  { args = [], nodeArgs = [], readyTimeoutMs = 60_000 } = {},
) {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  let exited = false;
  const exit = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited) throw new Error(`${name} exited before it was ready:\n${stderr}`);
    try {
      const response = await globalThis.fetch(`${url}/health`, {
        signal: globalThis.AbortSignal.timeout(1000),
      });
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer /health within ${readyTimeoutMs} ms:\n${stderr}`);
    }
    await sleep(100);
  }
  return {
    name,
    url,
    pid: child.pid,
    stderr: () => stderr,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Kills every child still running (used when the runner fails or is interrupted). */
export function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resident set size of a process in bytes (VmRSS of /proc/<pid>/status), or NaN. */
export function rssBytes(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return match === null ? NaN : Number(match[1]) * 1024;
  } catch {
    return NaN;
  }
}

/** Samples the RSS of `pid` every `everyMs` until `stop()` is called; returns the peak. */
export function sampleRss(pid, everyMs = 200) {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    const value = rssBytes(pid);
    if (!(value <= peak)) peak = Number.isFinite(peak) ? Math.max(peak, value) : value;
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = rssBytes(pid);
      return Number.isFinite(last) ? Math.max(peak, last) : peak;
    },
  };
}

let clockTicks;
/** CPU time (user + system) a process has used so far, in milliseconds; NaN when unknown. */
export function cpuMs(pid) {
  try {
    clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesized command name; utime and stime are fields 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
  } catch {
    return NaN;
  }
}

/** Runs a command to completion; resolves `{ code, ms, stdout, stderr, timedOut }`. */
export function runCommand(command, args, { cwd, env, timeoutMs = 600_000 } = {}) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout = (stdout + c.toString()).slice(-20_000);
    });
    child.stderr.on('data', (c) => {
      stderr = (stderr + c.toString()).slice(-20_000);
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, ms: performance.now() - started, stdout, stderr, timedOut });
    });
  });
}
