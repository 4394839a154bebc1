/**
 * The JSON envelope of every answer (SPEC §3): `{status, data, meta}` for success, `{status,
 * error}` for failures, and the record `meta` (creation and update times).
 */
import type { Issue } from './issues.js';

/** Metadata of a response about one write or one stored record. */
export interface RecordMeta {
  /** Unix time in milliseconds. */
  readonly lastUpdateTimeUnix: number;
  /** The same instant as `new Date(ms).toISOString()`. */
  readonly lastUpdateTimeISO: string;
}

/** A successful response body. */
export interface SuccessBody<TData> {
  readonly status: 'success';
  readonly data: TData;
  readonly meta?: object;
}

/** An error response body. */
export interface ErrorBody {
  readonly status: 'error';
  readonly error: {
    readonly reason: string;
    /** In the answer of `POST /batch`: the index of the operation that failed. */
    readonly operation?: number;
    readonly issues?: readonly Issue[];
  };
}

/** The `meta` of a record written or last updated at `ms`. */
export function recordMeta(ms: number): RecordMeta {
  return { lastUpdateTimeUnix: ms, lastUpdateTimeISO: new Date(ms).toISOString() };
}

/** Wraps data in the success envelope. */
export function successBody<TData>(data: TData, meta?: object): SuccessBody<TData> {
  return meta === undefined ? { status: 'success', data } : { status: 'success', data, meta };
}

/**
 * Wraps a reason (and validation issues, when there are any, and the failing operation of a
 * batch) in the error envelope.
 */
export function errorBody(
  reason: string,
  issues?: readonly Issue[],
  operation?: number,
): ErrorBody {
  return {
    status: 'error',
    error: {
      reason,
      ...(operation === undefined ? {} : { operation }),
      ...(issues === undefined || issues.length === 0 ? {} : { issues }),
    },
  };
}

/**
 * The JSON text of `successBody(record, recordMeta(ms))`, byte for byte, without building the
 * envelope and meta objects (the fast path of GET by key sends it as it is).
 */
export function recordBodyJson(record: object, ms: number): string {
  return recordBodyOfJson(JSON.stringify(record), ms);
}

/** `recordBodyJson` of a record already serialized (`json`). */
export function recordBodyOfJson(json: string, ms: number): string {
  const iso = new Date(ms).toISOString(); // throws, like recordMeta, for a time that is no date
  return `{"status":"success","data":${json},"meta":{"lastUpdateTimeUnix":${ms},"lastUpdateTimeISO":"${iso}"}}`;
}
