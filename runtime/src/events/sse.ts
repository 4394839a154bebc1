/**
 * The text of the `/events` stream (Server-Sent Events, SPEC §9). Every `data` line is one line of
 * JSON: JSON.stringify escapes line breaks inside strings, so no field can end a message early.
 */
import type { StoredChange } from '../driver.js';

/** The message of one change: `id`, `event: record.<op>`, and the event object as `data`. */
export function changeMessage(change: StoredChange): string {
  const { seq, op, timeUnix } = change;
  return (
    `id: ${seq}\nevent: record.${op}\n` +
    `data: {"seq":${seq},"entity":${JSON.stringify(change.entity)},"id":${JSON.stringify(change.id)},` +
    `"op":"${op}",${change.soft === true ? '"soft":true,' : ''}${change.version === undefined ? '' : `"version":${change.version},`}"record":${change.record},"timeUnix":${timeUnix},` +
    `"timeISO":"${new Date(timeUnix).toISOString()}"}\n\n`
  );
}

/**
 * The `reset` message: the changes after `after` are no longer kept (or never were here), so the
 * client reloads its data; the stream goes on after `seq`, which becomes its last event id.
 */
export function resetMessage(after: number, seq: number): string {
  const reason =
    after > seq
      ? `Event ${after} is unknown here (the last one is ${seq}): reload the data; events continue after ${seq}`
      : `Events after ${after} are no longer kept (EVENTS_RETENTION): reload the data; events continue after ${seq}`;
  return `id: ${seq}\nevent: reset\ndata: ${JSON.stringify({ after, seq, reason })}\n\n`;
}

/**
 * Sets the client's last event id without an event (a message of an `id` alone dispatches
 * nothing), so a client that reconnects before its first event resumes from where it started.
 */
export function positionMessage(seq: number): string {
  return `id: ${seq}\n\n`;
}

/** The comment that keeps proxies from closing an idle stream. */
export const KEEP_ALIVE = ': keep-alive\n\n';
