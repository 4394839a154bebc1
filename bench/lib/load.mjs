// Load generation with autocannon (programmatic, in the runner's process) and single-request
// timing for the bulk insert.
import autocannon from 'autocannon';
import { cpuMs } from './servers.mjs';
import { percentile } from './stats.mjs';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';

/**
 * One autocannon run against `url` with `request` (an autocannon request object, usually with a
 * `setupRequest` that picks a random key or makes a unique body): `warmupSeconds` of load that is
 * not counted, then `seconds` measured, on the same connections. Latencies are collected from the
 * response events at sub-millisecond resolution (autocannon's own histogram keeps whole ms).
 * With `pid`, also the CPU time the server process used in the measured window (from /proc):
 * `cpuUsPerRequest` and `cpuShare` (fraction of one core). Unlike req/s, CPU time per request
 * hardly depends on what else runs on the machine.
 * Returns `{ rps, p50, p99, ok, non2xx, errors, timeouts, seconds, cpuUsPerRequest, cpuShare }`.
 */
export async function loadRun(
  url,
  request,
  { connections = 50, seconds = 5, warmupSeconds = 0, pid } = {},
) {
  const latencies = [];
  let non2xx = 0;
  // autocannon stops on whole-second ticks (a 1.2 s run lasts 2 s): round the run up and measure
  // everything after the warm-up, so no load goes uncounted.
  const duration = Math.ceil(warmupSeconds + seconds);
  const begin = performance.now();
  const windowStart = begin + warmupSeconds * 1000;
  const windowEnd = begin + duration * 1000;
  const instance = autocannon({
    url,
    connections,
    duration,
    requests: [request],
    timeout: 10,
  });
  let cpuStart = NaN;
  let cpuEnd = NaN;
  let cpuWindowStart = NaN;
  let cpuWindowEnd = NaN;
  const startTimer = setTimeout(() => {
    cpuWindowStart = performance.now();
    if (pid !== undefined) cpuStart = cpuMs(pid);
  }, warmupSeconds * 1000);
  const endTimer = setTimeout(() => {
    cpuWindowEnd = performance.now();
    if (pid !== undefined) cpuEnd = cpuMs(pid);
  }, duration * 1000);
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    const now = performance.now();
    if (now < windowStart || now > windowEnd) return;
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    else non2xx++;
  });
  const result = await instance;
  clearTimeout(startTimer);
  clearTimeout(endTimer);
  if (pid !== undefined && Number.isNaN(cpuEnd)) {
    cpuWindowEnd = performance.now();
    cpuEnd = cpuMs(pid);
  }
  const cpuUsed = cpuEnd - cpuStart;
  const measuredEnd = Math.min(windowEnd, performance.now());
  latencies.sort((a, b) => a - b);
  const measured = (measuredEnd - windowStart) / 1000;
  return {
    rps: latencies.length / measured,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    ok: latencies.length,
    non2xx,
    // autocannon counts errors and timeouts over the whole run, warm-up included.
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: measured,
    cpuUsPerRequest: latencies.length === 0 ? NaN : (cpuUsed * 1000) / latencies.length,
    cpuShare: cpuUsed / (cpuWindowEnd - cpuWindowStart),
  };
}

/** Sends one request and waits for the whole response; returns `{ ms, status, text, headers }`. */
export async function timedRequest(url, { method = 'GET', body, headers = {} } = {}) {
  const started = performance.now();
  const response = await globalThis.fetch(url, {
    method,
    body,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
  });
  const text = await response.text();
  return {
    ms: performance.now() - started,
    status: response.status,
    text,
    headers: response.headers,
  };
}
