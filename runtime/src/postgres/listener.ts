/**
 * LISTEN for the outbox's notifications (outbox.ts) on a connection of its own, so that every
 * instance on one database hears of changes committed by any of them within moments. The outbox
 * stays the truth: a notification only says "read from your last seq". A lost connection is
 * opened again with backoff, and every (re)connection counts as a notification, so changes
 * committed while it was down are read too.
 */
import pg from 'pg';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

/** One LISTEN connection; `start` and `stop` may be called any number of times. */
export class ChangeNotifications {
  private client: pg.Client | undefined;
  private running = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    /** Called on every notification and after every (re)connection. */
    private readonly onNotice: () => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    void this.connect();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    this.client = client;
    // Errors of an idle LISTEN connection arrive as events; one handler covers both kinds.
    let failed = false;
    const fail = (): void => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      this.retry();
    };
    client.on('error', fail);
    client.on('end', fail);
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.onNotice();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch {
      fail();
      return;
    }
    if (!this.running || this.client !== client) {
      await client.end().catch(() => undefined);
      return;
    }
    this.retryMs = FIRST_RETRY_MS;
    this.onNotice();
  }

  private retry(): void {
    if (!this.running || this.retryTimer !== undefined) return;
    const delay = this.retryMs;
    this.retryMs = Math.min(delay * 2, MAX_RETRY_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.running) void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
