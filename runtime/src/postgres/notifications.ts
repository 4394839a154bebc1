/**
 * How the instances on one database tell each other of new changes (SPEC §9): each instance
 * announces its own commits with NOTIFY on a channel per schema, and LISTENs on it on a
 * connection of its own. The outbox stays the truth: a notification only says "read from your
 * last seq", and what a lost one would have said is found by the readers' polling.
 *
 * The NOTIFY is not part of the write's transaction: a notifying commit takes a database-wide
 * lock and queues the message, work that would lengthen the section in which the outbox's
 * counter serialises writers (outbox.ts). An instance announces right after its commits instead,
 * at most one NOTIFY in flight (further commits meanwhile make one more), committed
 * asynchronously (a lost notification costs a poll interval, never a change).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { sqlState } from './errors.js';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 10_000;

/** The payload of a notification: the announcing instance and the highest seq it committed. */
function payload(instance: string, seq: number): string {
  return `${instance}:${seq}`;
}

/** Announces an instance's commits; `token` tells its own notifications from the others'. */
export class ChangeAnnouncer {
  /** This instance's mark in its notifications. */
  readonly token = randomBytes(6).toString('hex');
  private sending = false;
  private again = false;
  private seq = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly channel: string,
  ) {}

  /** Announces that this instance committed changes up to `seq`. */
  announce(seq: number): void {
    this.seq = Math.max(this.seq, seq);
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = true;
    void this.send();
  }

  private async send(): Promise<void> {
    try {
      do {
        this.again = false;
        // Literals only (a hex channel name, a hex token, an integer): one simple-protocol query.
        await this.pool.query(
          `BEGIN; SET LOCAL synchronous_commit TO off; ` +
            `NOTIFY "${this.channel}", '${payload(this.token, this.seq)}'; COMMIT`,
        );
      } while (this.again);
    } catch {
      // The storage is away, or the engine has no NOTIFY: the other instances poll.
    } finally {
      this.sending = false;
    }
  }
}

/** One LISTEN connection; `start` and `stop` may be called any number of times. */
export class ChangeListener {
  private client: pg.Client | undefined;
  private running = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    /** Notifications with this token are the instance's own, heard already: ignored. */
    private readonly ownToken: string,
    /** Called on every other instance's notification and after every (re)connection. */
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
    const fail = (retry: boolean): void => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      client.end().catch(() => undefined);
      if (retry) this.retry();
    };
    client.on('error', () => fail(true));
    client.on('end', () => fail(true));
    client.on('notification', (message) => {
      if (message.channel !== this.channel) return;
      if (message.payload?.startsWith(`${this.ownToken}:`) === true) return;
      this.onNotice();
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
    } catch (error) {
      // An engine without LISTEN (feature_not_supported) will not have it later either.
      fail(sqlState(error) !== '0A000');
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
