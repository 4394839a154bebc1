/**
 * A Server-Sent Events client for the tests of `/events`: reads the stream with fetch and parses
 * it as the HTML standard says (fields per line, a blank line dispatches, `:` starts a comment),
 * keeping every message, every comment and the last event id as EventSource would. Every wait is
 * bounded by a deadline.
 */

/** One dispatched message: its fields as received. */
export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

/** A change event as `/events` sends it (its data parsed). */
export interface ChangeMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: {
    seq: number;
    entity: string;
    id: string;
    op: string;
    record: Record<string, unknown>;
    timeUnix: number;
    timeISO: string;
  };
}

export class SseStream {
  /** Messages with data, in order of arrival. */
  readonly messages: SseMessage[] = [];
  /** Comment lines (without the `:`). */
  readonly comments: string[] = [];
  /** The last event id, as EventSource keeps it (set also by a message without data). */
  lastEventId = '';
  /** Every message in its raw text, for exact-format checks. */
  readonly raw: string[] = [];
  private ended = false;
  private endError: unknown;
  private waiters: (() => void)[] = [];

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly controller: AbortController,
    private readonly onMessage: ((message: SseMessage) => void) | undefined,
  ) {}

  /** Opens `url`; resolves once the response headers arrived (a JSON error answer too). */
  static async open(
    url: string,
    headers: Record<string, string> = {},
    /** Called with each message as it is dispatched. */
    onMessage?: (message: SseMessage) => void,
  ): Promise<SseStream> {
    const controller = new AbortController();
    const response = await fetch(url, {
      headers: { accept: 'text/event-stream', ...headers },
      signal: controller.signal,
    });
    const stream = new SseStream(response.status, response.headers, controller, onMessage);
    if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      stream.errorBody = await response.text();
      stream.finish(undefined);
      return stream;
    }
    void stream.read(response.body!);
    return stream;
  }

  /** The body of a response that is not a stream (an error envelope). */
  errorBody = '';

  /** True once the server ended the stream or the connection broke. */
  get closed(): boolean {
    return this.ended;
  }

  /** Why the stream ended, when it broke rather than ended cleanly. */
  get error(): unknown {
    return this.endError;
  }

  /** The change events received so far (messages named `record.*`), parsed. */
  changes(): ChangeMessage[] {
    return this.messages
      .filter((message) => message.event.startsWith('record.'))
      .map((message) => ({
        id: message.id,
        event: message.event,
        data: JSON.parse(message.data) as ChangeMessage['data'],
      }));
  }

  /** Waits until `check` holds (re-checked after each message), at most `timeoutMs`. */
  async until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline)
        throw new Error(
          `timed out after ${timeoutMs} ms waiting for ${what}; received ${this.messages.length} messages:\n` +
            this.raw.slice(-5).join(''),
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(100, Math.max(1, deadline - Date.now())));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for `count` change events in total. */
  untilChanges(count: number, timeoutMs?: number): Promise<void> {
    return this.until(`${count} change events`, () => this.changes().length >= count, timeoutMs);
  }

  /** Closes the connection from the client's side. */
  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let id: string | undefined;
    let event = '';
    let data: string[] = [];
    let text = '';
    try {
      for await (const chunk of body) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          text += `${line}\n`;
          if (line === '') {
            if (id !== undefined) this.lastEventId = id;
            if (data.length > 0) {
              const message = {
                id,
                event: event === '' ? 'message' : event,
                data: data.join('\n'),
              };
              this.messages.push(message);
              this.onMessage?.(message);
            }
            if (text !== '\n') this.raw.push(text);
            id = undefined;
            event = '';
            data = [];
            text = '';
            this.notify();
            continue;
          }
          if (line.startsWith(':')) {
            this.comments.push(line.slice(1).trim());
            text = '';
            this.notify();
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') id = value;
          else if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
        }
      }
      this.finish(undefined);
    } catch (error) {
      this.finish(error);
    }
  }

  private finish(error: unknown): void {
    this.ended = true;
    this.endError = error;
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}
