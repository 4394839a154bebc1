/** The service as the admin app sees it: credentials, requests, its description, its events. */
import { listFeatures } from './features.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

/** A field of an ENTITY document (`GET /entity`), as far as the app uses it. */
export interface Field {
  readonly name: string;
  readonly type: string;
  readonly required?: boolean;
  readonly displayName?: string;
  readonly description?: string;
  readonly enums?: readonly string[];
  readonly select?: { readonly elems: readonly { value: string; displayName?: string }[] };
  readonly object?: { readonly fields: readonly Field[] };
  readonly dict?: { readonly fields: readonly Field[] };
  readonly array?: Omit<Field, 'name'> & { readonly name?: string };
  readonly entityRef?: { readonly entity: string };
}

export type Method = 'GET_LIST' | 'GET_BYID' | 'NEW' | 'UPDATE' | 'DELETE';

/** One entity: its schema, REST configuration, the caller's rights and the list's features. */
export interface Entity {
  readonly name: string;
  readonly displayName: string;
  readonly description?: string;
  readonly fields: readonly Field[];
  readonly key: readonly string[];
  readonly refDisplayFields: readonly string[];
  readonly keySeparator: string;
  readonly singleRecord: boolean;
  /** The one record id of a single-record entity (`lkValue`). */
  readonly singleRecordId: string;
  readonly path: string;
  readonly allowed: ReadonlySet<Method>;
  readonly orderable: ReadonlySet<string> | undefined;
  readonly maxWindow: number | undefined;
  /** List parameters the service describes beyond filters and paging (`q`, `count`, `fields`, `expand`). */
  readonly features: ReadonlySet<string>;
}

export interface Me {
  readonly subject: string | null;
  readonly roles: readonly string[];
  readonly accessRules: boolean;
  readonly entities: Readonly<Record<string, readonly Method[]>>;
}

export interface Issue {
  readonly path: readonly (string | number)[];
  readonly code?: string;
  readonly message: string;
}

/** An error answer of the service. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly issues: readonly Issue[] = [],
  ) {
    super(message);
  }
}

export type CredentialKind = 'bearer' | 'apiKey';
export interface Credential {
  readonly kind: CredentialKind;
  readonly value: string;
}

const STORE = 'entity-gen-admin-credential';

/** The credential of this browser session (sessionStorage: gone when the tab closes). */
export function storedCredential(): Credential | undefined {
  try {
    const text = sessionStorage.getItem(STORE);
    if (text === null) return undefined;
    const parsed = JSON.parse(text) as Credential;
    return typeof parsed.value === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function storeCredential(credential: Credential | undefined): void {
  if (credential === undefined) sessionStorage.removeItem(STORE);
  else sessionStorage.setItem(STORE, JSON.stringify(credential));
}

function headersOf(credential: Credential | undefined): Record<string, string> {
  if (credential === undefined) return {};
  return credential.kind === 'bearer'
    ? { Authorization: `Bearer ${credential.value}` }
    : { 'X-API-Key': credential.value };
}

export interface Answer<T> {
  readonly data: T;
  readonly meta: JsonObject;
  readonly etag: string | null;
}

/** The `X-Read-After` token of the last write, when the service gives one (read replicas). */
let readAfter: string | undefined;

/** Calls the service; an error answer is thrown as an ApiError with its reason and issues. */
export async function call<T>(
  credential: Credential | undefined,
  method: string,
  path: string,
  options: { body?: Json; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...headersOf(credential), ...options.headers };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  // Read-your-writes behind read replicas: a read sends back the token of this tab's last write.
  if (method === 'GET' && readAfter !== undefined) headers['X-Read-After'] = readAfter;
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      cache: 'no-store',
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
  } catch {
    throw new ApiError(0, 'The service cannot be reached');
  }
  const token = response.headers.get('X-Read-After');
  if (token !== null && method !== 'GET') readAfter = token;
  const text = await response.text();
  let parsed: JsonObject = {};
  try {
    parsed = text === '' ? {} : (JSON.parse(text) as JsonObject);
  } catch {
    // not JSON: reported below by status
  }
  if (!response.ok) {
    const error = (parsed['error'] ?? {}) as { reason?: string; issues?: Issue[] };
    throw new ApiError(
      response.status,
      error.reason ?? `${response.status} ${response.statusText}`,
      error.issues ?? [],
    );
  }
  if (path === '/openapi.json') return { data: parsed as T, meta: {}, etag: null };
  return {
    data: parsed['data'] as T,
    meta: (parsed['meta'] ?? {}) as JsonObject,
    etag: response.headers.get('ETag'),
  };
}

/** Everything the app needs to know about the service for this caller. */
export async function describe(credential: Credential | undefined): Promise<{
  me: Me;
  entities: Entity[];
  /** The service's name (the OpenAPI document's title), when it has one. */
  title: string | undefined;
}> {
  const [me, described, document] = await Promise.all([
    call<Me>(credential, 'GET', '/me'),
    call<Record<string, { schema: { entity: JsonObject }; restConfig: JsonObject }>>(
      credential,
      'GET',
      '/entity',
    ),
    call<JsonObject>(credential, 'GET', '/openapi.json').catch(() => ({ data: {} as JsonObject })),
  ]);
  const entities = Object.entries(described.data).map(([name, info]): Entity => {
    const entity = info.schema.entity;
    const rest = info.restConfig;
    const path = `/data/${name.toLowerCase()}`;
    const orderable = rest['allowedOrderingFields'];
    return {
      name,
      displayName: typeof entity['displayName'] === 'string' ? entity['displayName'] : name,
      ...(typeof entity['description'] === 'string' ? { description: entity['description'] } : {}),
      fields: entity['fields'] as unknown as Field[],
      key: (entity['lk'] ?? []) as string[],
      refDisplayFields: (entity['refDisplayFields'] ?? []) as string[],
      keySeparator: typeof entity['lkSeparator'] === 'string' ? entity['lkSeparator'] : '~',
      singleRecord: entity['singleRecord'] === true,
      singleRecordId: typeof entity['lkValue'] === 'string' ? entity['lkValue'] : '_singlerec_lk',
      path,
      allowed: new Set(me.data.entities[name] ?? []),
      orderable: Array.isArray(orderable) ? new Set(orderable as string[]) : undefined,
      maxWindow: typeof rest['maxWindow'] === 'number' ? rest['maxWindow'] : undefined,
      features: listFeatures(document.data, path),
    };
  });
  const info = document.data['info'];
  const title =
    typeof info === 'object' && info !== null && !Array.isArray(info) ? info['title'] : undefined;
  return { me: me.data, entities, title: typeof title === 'string' ? title : undefined };
}

/** The record id of a record: its key values joined by the key separator. */
export function recordId(entity: Entity, record: JsonObject): string {
  return entity.key.map((name) => String(record[name] ?? '')).join(entity.keySeparator);
}

export function recordPath(entity: Entity, id: string): string {
  return `${entity.path}/${encodeURIComponent(id)}`;
}

/** The label of a field: its display name, else its name. */
export function labelOf(field: { name?: string; displayName?: string }): string {
  return field.displayName ?? field.name ?? '';
}

/**
 * The field that names a record in lists and pickers: the first of the schema's `refDisplayFields`,
 * else a key of one text field, else the first text field outside the key, else the first key field.
 */
export function displayField(entity: Entity): string {
  if (entity.refDisplayFields[0] !== undefined) return entity.refDisplayFields[0];
  const keyField = entity.fields.find((field) => field.name === entity.key[0]);
  if (entity.key.length === 1 && keyField?.type === 'STRING') return keyField.name;
  const text = entity.fields.find(
    (field) => field.type === 'STRING' && !entity.key.includes(field.name),
  );
  return text?.name ?? entity.key[0] ?? entity.fields[0]?.name ?? '';
}

/** One change of `GET /events`. */
export interface Change {
  readonly seq: number;
  readonly entity: string;
  readonly id: string;
  readonly op: 'created' | 'updated' | 'deleted';
}

/**
 * Follows `GET /events` with the credential (EventSource cannot send headers): calls `onChange`
 * for every change and `onState` when the stream opens or drops; reconnects with `Last-Event-ID`.
 * Returns a function that stops it.
 */
export function follow(
  credential: Credential | undefined,
  entities: readonly string[],
  onChange: (change: Change | undefined) => void,
  onState: (live: boolean) => void,
): () => void {
  const controller = new AbortController();
  let lastEventId: string | undefined;
  const run = async (): Promise<void> => {
    while (!controller.signal.aborted) {
      try {
        const headers = headersOf(credential);
        if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
        const query = entities.length > 0 ? `?entity=${entities.join(',')}` : '';
        const response = await fetch(`/events${query}`, { headers, signal: controller.signal });
        // Events switched off (404) or not for this caller (401, 403): no use asking again.
        if (response.status >= 400 && response.status < 500) {
          onState(false);
          return;
        }
        if (!response.ok || response.body === null) throw new Error(String(response.status));
        onState(true);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            let event = 'message';
            let data = '';
            for (const line of buffer.slice(0, end).split('\n')) {
              const colon = line.indexOf(':');
              if (colon <= 0) continue;
              const field = line.slice(0, colon);
              const text = line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') lastEventId = text;
              else if (field === 'event') event = text;
              else if (field === 'data') data += text;
            }
            buffer = buffer.slice(end + 2);
            if (event === 'reset') onChange(undefined);
            else if (event.startsWith('record.') && data !== '')
              onChange(JSON.parse(data) as Change);
          }
        }
      } catch {
        // dropped or refused: try again below
      }
      onState(false);
      if (controller.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => controller.abort();
}
