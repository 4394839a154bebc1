// Load generation with autocannon (programmatic, in the runner's process) and single-request
// timing for the bulk insert.
import autocannon from 'autocannon';
import { percentile } from './stats.mjs';

/**
 * One autocannon run against `url` with `request` (an autocannon request object, usually with a
 * `setupRequest` that picks a random key or makes a unique body). Latencies are collected from
 * the response events at sub-millisecond resolution (autocannon's own histogram keeps whole ms).
 * Returns `{ rps, p50, p99, total, non2xx, errors, timeouts, seconds }`.
 */
export async function loadRun(url, request, { connections = 50, seconds = 5 } = {}) {
  const latencies = [];
  const instance = autocannon({
    url,
    connections,
    duration: seconds,
    requests: [request],
    timeout: 10,
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const result = await instance;
  latencies.sort((a, b) => a - b);
  const seconds_ = result.duration;
  return {
    rps: result['2xx'] / seconds_,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: seconds_,
  };
}

/** Sends one request and waits for the whole response; returns `{ ms, status, text }`. */
export async function timedRequest(url, { method = 'GET', body, headers = {} } = {}) {
  const started = performance.now();
  const response = await fetch(url, {
    method,
    body,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
  });
  const text = await response.text();
  return { ms: performance.now() - started, status: response.status, text, headers: response.headers };
}
