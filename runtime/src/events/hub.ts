/**
 * The change events of one service process (SPEC §9): reads the driver's outbox in seq order and
 * fans each change out to the `/events` subscribers, resumes subscribers from their last id, keeps
 * idle streams alive, trims the outbox, and tells in-process listeners (`afterCommit` hooks) of
 * the changes this process committed.
 *
 * The outbox is the truth. The hub reads it from the last seq it delivered whenever it may hold
 * more: at once after a write of this process, on a PostgreSQL notification of another instance,
 * and every `pollMs` (other processes on a SQLite file; a lost notification). Writers never wait
 * for the hub, and the hub never waits for a subscriber while fanning out: a subscriber that
 * cannot keep up is disconnected and resumes from its last id.
 */
import type { ServerResponse } from 'node:http';
import type { ChangeFeed, StorageDriver, StoredChange } from '../driver.js';
import { HttpError } from '../errors.js';
import type { Logger } from '../logger.js';
import { DEFAULT_EVENT_SETTINGS, type EventSettings } from './settings.js';
import { KEEP_ALIVE, positionMessage, resetMessage } from './sse.js';
import { OutgoingChange, Subscriber, type ChangeFilter } from './subscriber.js';

/** Changes read from the outbox at a time. */
const BATCH = 500;
/** Recent changes kept in memory, so a subscriber a little behind joins the fan-out without a read. */
const RECENT = 2048;
/** Trimming runs at least this often (and four times per retention period when that is shorter). */
const MAX_TRIM_INTERVAL_MS = 60_000;

export interface EventHubOptions {
  /** Settings (`eventSettingsFromEnv`); each missing one has its default. */
  readonly settings?: Partial<EventSettings>;
  readonly logger?: Logger;
  /** Clock in Unix milliseconds, for trimming (default `Date.now`). */
  readonly now?: () => number;
}

/** What `subscribe` needs of one `/events` request. */
export interface SubscriptionRequest {
  readonly res: ServerResponse;
  readonly filter: ChangeFilter;
  /** The seq the client resumes after (`Last-Event-ID` or `?after=`); none: from now on. */
  readonly after: number | undefined;
  /** Sends the stream's status and headers; called once the subscription can start. */
  readonly begin: () => void;
}

export class EventHub {
  readonly settings: EventSettings;
  private readonly feed: ChangeFeed | undefined;
  private readonly logger: Logger | undefined;
  private readonly now: () => number;
  /** The seq of the last change read and fanned out. */
  private head = 0;
  /** The last changes read, contiguous up to `head`. */
  private recent: OutgoingChange[] = [];
  private readonly subscribers = new Set<Subscriber>();
  private readonly live = new Set<Subscriber>();
  private readonly listeners = new Set<(committed: readonly StoredChange[]) => void>();
  private unwatch: (() => void) | undefined;
  private pumping = false;
  private pumpAgain = false;
  private readFailing = false;
  private trimFailing = false;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private trimTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(driver: StorageDriver, options: EventHubOptions = {}) {
    this.settings = { ...DEFAULT_EVENT_SETTINGS, ...options.settings };
    this.feed = driver.changes;
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** How many `/events` streams are open (diagnostics and tests). */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Starts trimming the outbox to the retention period (a running service; see `startServer`). */
  start(): void {
    if (this.closed || this.feed === undefined || this.trimTimer !== undefined) return;
    this.watch();
    const every = Math.min(MAX_TRIM_INTERVAL_MS, Math.max(10, this.settings.retentionMs / 4));
    this.trimTimer = setInterval(() => void this.trim(), every);
    this.trimTimer.unref();
    void this.trim();
  }

  /** Calls `listener` with the changes this process commits, right after each commit. */
  onCommitted(listener: (committed: readonly StoredChange[]) => void): () => void {
    this.listeners.add(listener);
    this.watch();
    return () => {
      this.listeners.delete(listener);
    };
  }

  /**
   * Serves one `/events` client until it disconnects or the hub closes. Rejects (before `begin`,
   * so the client gets the error envelope) when events are off, the hub is closing or the
   * storage cannot be read.
   */
  async subscribe(request: SubscriptionRequest): Promise<void> {
    const feed = this.feed;
    if (!this.settings.enabled || feed === undefined) {
      throw new HttpError(
        404,
        feed === undefined
          ? 'This service keeps no change events: its storage driver has no outbox'
          : 'Change events are switched off for this service (EVENTS=off)',
      );
    }
    if (this.closed)
      throw new HttpError(503, 'The service is shutting down; connect again', { expose: true });
    const bounds = await feed.bounds();
    if (this.closed)
      throw new HttpError(503, 'The service is shutting down; connect again', { expose: true });
    request.begin();
    const subscriber = new Subscriber(
      request.res,
      request.filter,
      bounds.last,
      this.settings.bufferBytes,
      (unsent) =>
        this.logger?.info(
          { unsent, bufferBytes: this.settings.bufferBytes },
          'event subscriber disconnected: it fell behind by more than EVENTS_BUFFER_BYTES',
        ),
    );
    const { after } = request;
    if (after === undefined) subscriber.send(positionMessage(bounds.last));
    else if (after > bounds.last || after < bounds.first - 1)
      subscriber.send(resetMessage(after, bounds.last));
    else subscriber.after = after;
    this.subscribers.add(subscriber);
    request.res.once('close', () => this.remove(subscriber));
    // Gone while the bounds were read: its 'close' has passed already.
    if (!subscriber.open) return this.remove(subscriber);
    this.watch();
    this.startTimers();
    void this.catchUp(subscriber);
  }

  /** Ends every stream cleanly and stops reading; later subscriptions get a 503. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of [this.keepAliveTimer, this.pollTimer, this.trimTimer])
      if (timer !== undefined) clearInterval(timer);
    this.unwatch?.();
    this.unwatch = undefined;
    for (const subscriber of this.subscribers) subscriber.end();
    this.subscribers.clear();
    this.live.clear();
  }

  // ---------------------------------------------------------------------------------------------

  private watch(): void {
    if (this.closed || this.unwatch !== undefined || this.feed === undefined) return;
    this.unwatch = this.feed.watch((committed) => {
      if (committed.length > 0) for (const listener of this.listeners) listener(committed);
      this.wake();
    });
  }

  private startTimers(): void {
    if (this.keepAliveTimer === undefined) {
      this.keepAliveTimer = setInterval(() => {
        for (const subscriber of this.subscribers) subscriber.send(KEEP_ALIVE);
      }, this.settings.keepAliveMs);
      this.keepAliveTimer.unref();
    }
    if (this.pollTimer === undefined) {
      this.pollTimer = setInterval(() => this.wake(), this.settings.pollMs);
      this.pollTimer.unref();
    }
  }

  private remove(subscriber: Subscriber): void {
    this.subscribers.delete(subscriber);
    this.live.delete(subscriber);
    if (this.subscribers.size > 0) return;
    // Nobody listens: no keep-alives and no polling until someone does.
    for (const timer of [this.keepAliveTimer, this.pollTimer])
      if (timer !== undefined) clearInterval(timer);
    this.keepAliveTimer = undefined;
    this.pollTimer = undefined;
  }

  /**
   * Brings a new subscriber from its position up to the fan-out: from the recent changes when
   * they reach back far enough, else page by page from the outbox, waiting for each page to drain.
   */
  private async catchUp(subscriber: Subscriber): Promise<void> {
    const feed = this.feed!;
    // A client that reads nothing for this long while catching up has stopped reading.
    const stallMs = Math.max(1000, 2 * this.settings.keepAliveMs);
    try {
      for (;;) {
        if (this.closed || !subscriber.open) return;
        if (this.live.size === 0 && subscriber.after > this.head) {
          // Nobody else is live: the fan-out may simply start where this subscriber is.
          this.head = subscriber.after;
          this.recent = [];
        }
        if (subscriber.after >= this.head) return this.goLive(subscriber);
        const oldest = this.recent[0]?.change.seq;
        if (oldest !== undefined && oldest <= subscriber.after + 1) {
          for (const outgoing of this.recent) subscriber.offer(outgoing);
          return this.goLive(subscriber);
        }
        const page = await feed.read(subscriber.after, BATCH);
        if (this.closed || !subscriber.open) return;
        if (page[0]?.seq !== subscriber.after + 1) {
          // Trimmed while it was catching up: changes are missing, the client must reload.
          subscriber.send(resetMessage(subscriber.after, this.head));
          subscriber.after = this.head;
          continue;
        }
        for (const change of page) subscriber.offer(new OutgoingChange(change));
        if (!(await subscriber.drained(stallMs))) {
          subscriber.drop();
          return;
        }
      }
    } catch (error) {
      // The storage failed mid-way: end the stream; the client resumes from its last event.
      this.logger?.warn({ err: error }, 'change events: a subscriber could not catch up');
      subscriber.end();
    }
  }

  private goLive(subscriber: Subscriber): void {
    subscriber.live = true;
    this.live.add(subscriber);
    this.wake();
  }

  /** Reads the outbox from `head` now, or once the read under way is done. */
  private wake(): void {
    if (this.closed || this.live.size === 0) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    void this.pump();
  }

  private async pump(): Promise<void> {
    const feed = this.feed!;
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        for (;;) {
          const batch = await feed.read(this.head, BATCH);
          if (this.closed) return;
          await this.deliver(batch);
          if (batch.length < BATCH) break;
        }
      } while (this.pumpAgain && this.live.size > 0);
      if (this.readFailing) this.logger?.info('change events: reading the outbox works again');
      this.readFailing = false;
    } catch (error) {
      // Polling tries again; one line per outage, not one per attempt.
      if (!this.readFailing)
        this.logger?.warn({ err: error }, 'change events: reading the outbox failed; retrying');
      this.readFailing = true;
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Fans `batch` out to the live subscribers and remembers it. After every quarter of a
   * subscriber's buffer it lets the event loop run, so the sockets of subscribers that keep up
   * drain: a burst (a large list insert) never drops them, only a subscriber that cannot read as
   * fast as changes come.
   */
  private async deliver(batch: readonly StoredChange[]): Promise<void> {
    let sent = 0;
    for (const change of batch) {
      if (this.closed) return;
      if (change.seq <= this.head) continue;
      if (change.seq !== this.head + 1) {
        // Trimmed before it was read (a retention shorter than an outage): say so, go on.
        for (const subscriber of this.live) {
          if (subscriber.after >= change.seq - 1) continue;
          subscriber.send(resetMessage(subscriber.after, change.seq - 1));
          subscriber.after = change.seq - 1;
        }
        this.recent = [];
      }
      const outgoing = new OutgoingChange(change);
      this.head = change.seq;
      this.recent.push(outgoing);
      if (this.recent.length > 2 * RECENT) this.recent = this.recent.slice(-RECENT);
      if (this.live.size === 0) continue;
      for (const subscriber of this.live) subscriber.offer(outgoing);
      sent += outgoing.message().length;
      if (sent > this.settings.bufferBytes / 4) {
        sent = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }

  private async trim(): Promise<void> {
    try {
      const removed = await this.feed!.trim(this.now() - this.settings.retentionMs);
      if (removed > 0) this.logger?.debug({ removed }, 'change events: trimmed the outbox');
      this.trimFailing = false;
    } catch (error) {
      if (!this.trimFailing)
        this.logger?.warn({ err: error }, 'change events: trimming the outbox failed; retrying');
      this.trimFailing = true;
    }
  }
}
