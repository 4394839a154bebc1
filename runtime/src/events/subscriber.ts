/**
 * One client of `/events`: its HTTP response, which changes it receives, and how far it got. The
 * hub writes to it and never waits for it while fanning out: the bytes it leaves unread are
 * bounded, and a subscriber over the bound is disconnected (it resumes from its last id).
 */
import type { ServerResponse } from 'node:http';
import type { StoredChange } from '../driver.js';
import { changeMessage } from './sse.js';

/** Which changes a subscriber receives; `record` parses the change's record when asked. */
export type ChangeFilter = (
  change: StoredChange,
  record: () => Readonly<Record<string, unknown>>,
) => boolean;

/** A change on its way to subscribers: its message rendered once, its record parsed once. */
export class OutgoingChange {
  private text: string | undefined;
  private parsed: Readonly<Record<string, unknown>> | undefined;

  constructor(readonly change: StoredChange) {}

  message(): string {
    this.text ??= changeMessage(this.change);
    return this.text;
  }

  record(): Readonly<Record<string, unknown>> {
    this.parsed ??= JSON.parse(this.change.record) as Record<string, unknown>;
    return this.parsed;
  }
}

export class Subscriber {
  /** Takes changes from the hub's fan-out (else it is still catching up from the outbox). */
  live = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly filter: ChangeFilter,
    /** The seq of the last change it received or skipped. */
    public after: number,
    private readonly bufferBytes: number,
    /** Called once when the subscriber is dropped for falling behind. */
    private readonly onDrop: (unsent: number) => void,
  ) {}

  /** False once the connection closed or the stream ended. */
  get open(): boolean {
    const socket = this.res.socket;
    return !this.res.destroyed && !this.res.writableEnded && socket !== null && !socket.destroyed;
  }

  /** Sends `outgoing` if it is newer than `after` and the filter takes it; `after` moves on either way. */
  offer(outgoing: OutgoingChange): void {
    const { change } = outgoing;
    if (change.seq <= this.after) return;
    this.after = change.seq;
    if (this.filter(change, () => outgoing.record())) this.send(outgoing.message());
  }

  /** Writes `text`; a subscriber whose unread bytes now exceed the buffer is dropped. */
  send(text: string): void {
    if (!this.open) return;
    this.res.write(text);
    const unsent = this.res.writableLength;
    if (unsent > this.bufferBytes) {
      this.res.destroy();
      this.onDrop(unsent);
    }
  }

  /** Resolves true once what was written has drained; false if the connection closed or `timeoutMs` passed. */
  drained(timeoutMs: number): Promise<boolean> {
    if (!this.open) return Promise.resolve(false);
    if (!this.res.writableNeedDrain) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.res.once('drain', onDrain);
      this.res.once('close', onClose);
    });
  }

  /** Drops a subscriber that stopped reading. */
  drop(): void {
    if (!this.open) return;
    const unsent = this.res.writableLength;
    this.res.destroy();
    this.onDrop(unsent);
  }

  /** Ends the stream cleanly (what is written is still delivered). */
  end(): void {
    if (this.open) this.res.end();
  }
}
