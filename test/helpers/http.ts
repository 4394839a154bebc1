import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A JSON response as tests look at it. */
export interface JsonResponse {
  readonly status: number;
  readonly headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: a response body is whatever the service sent; tests narrow it with expect()
  readonly body: any;
  readonly text: string;
}

/** A running HTTP server for a Koa callback, with small request helpers. */
export interface TestServer {
  readonly url: string;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<JsonResponse>;
  close(): Promise<void>;
}

/** Serves `callback` on a free loopback port. */
export async function serve(callback: Parameters<typeof createServer>[1]): Promise<TestServer> {
  const server: Server = createServer(callback);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.text();
      let parsed: unknown;
      if (text !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
