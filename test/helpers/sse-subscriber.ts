/**
 * A logical subscriber of `/events` that reconnects with its last event id whenever its stream
 * ends, as a browser's EventSource does, keeping the seq of every change it receives. For the
 * tests that kill or restart services under their subscribers.
 */
import { sleep } from './built-service.js';
import { SseStream, type SseMessage } from './sse.js';

export class ResumingSubscriber {
  readonly seqs: number[] = [];
  /** Messages other than changes (a `reset` would mean changes were lost). */
  readonly unexpected: string[] = [];
  reconnects = 0;
  private stream: SseStream | undefined;
  private stopped = false;
  private lastEventId: string;
  private running: Promise<void> | undefined;

  /** `after`: the seq the first connection resumes after (its `Last-Event-ID`). */
  constructor(
    private readonly url: string,
    after = 0,
  ) {
    this.lastEventId = String(after);
  }

  start(): void {
    this.running = this.follow();
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      const onMessage = (message: SseMessage): void => {
        if (message.event.startsWith('record.'))
          this.seqs.push((JSON.parse(message.data) as { seq: number }).seq);
        else this.unexpected.push(`${message.event}: ${message.data}`);
      };
      try {
        this.stream = await SseStream.open(
          `${this.url}/events`,
          { 'Last-Event-ID': this.lastEventId },
          onMessage,
        );
      } catch {
        await sleep(100);
        continue;
      }
      const stream = this.stream;
      // An answer other than a stream (no service behind a proxy, or one still starting): retry.
      if (stream.status !== 200) {
        await sleep(100);
        continue;
      }
      await stream.until('the end of the stream', () => stream.closed || this.stopped, 600_000);
      if (stream.lastEventId !== '') this.lastEventId = stream.lastEventId;
      if (!this.stopped) this.reconnects++;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stream?.close();
    await this.running;
  }
}
