/** The list, record and form views of one entity. */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import {
  ApiError,
  call,
  displayField,
  follow,
  labelOf,
  recordId,
  recordPath,
  type Credential,
  type Entity,
  type Field,
  type Json,
  type JsonObject,
} from './api.js';
import { FieldList, idOf } from './controls.js';

export interface ViewProps {
  readonly entity: Entity;
  readonly entities: readonly Entity[];
  readonly credential: Credential | undefined;
  readonly navigate: (hash: string) => void;
}

const SORTABLE = new Set([
  'STRING',
  'ENUM',
  'SELECT',
  'ENTITY_REF',
  'INTEGER',
  'DOUBLE',
  'DECIMAL',
  'DATE',
  'DATE_TIME',
  'BOOL',
]);
const TEXT_OPERATORS = [
  'EQUALS',
  'NOT_EQUALS',
  'CONTAINS',
  'NOT_CONTAINS',
  'STARTS_WITH',
  'ENDS_WITH',
  'GT',
  'GTE',
  'LT',
  'LTE',
];
const ORDERED_OPERATORS = ['EQUALS', 'NOT_EQUALS', 'GT', 'GTE', 'LT', 'LTE'];

/** The filter operators of a field's type (docs/api.md, Filters); none for the others. */
export function operatorsOf(field: Field): readonly string[] {
  switch (field.type) {
    case 'STRING':
    case 'ENUM':
    case 'SELECT':
    case 'ENTITY_REF':
      return TEXT_OPERATORS;
    case 'INTEGER':
    case 'DOUBLE':
    case 'DECIMAL':
    case 'DATE':
    case 'DATE_TIME':
      return ORDERED_OPERATORS;
    case 'BOOL':
      return ['EQUALS', 'NOT_EQUALS'];
    case 'ARRAY':
      return field.array !== undefined && SORTABLE.has(field.array.type)
        ? ['CONTAINS', 'NOT_CONTAINS']
        : [];
    default:
      return [];
  }
}

interface Filter {
  readonly field: string;
  readonly operator: string;
  readonly value: string;
}

/** A cell's text: scalars as they are, references by their expanded display field, the rest summed up. */
function cellText(value: Json | undefined, field: Field, entities: readonly Entity[]): string {
  if (value === undefined || value === null) return '';
  if (field.type === 'ENTITY_REF' && typeof value === 'object' && !Array.isArray(value)) {
    const target = entities.find((entity) => entity.name === field.entityRef?.entity.toUpperCase());
    const shown = target === undefined ? undefined : value[displayField(target)];
    return typeof shown === 'string' ? shown : JSON.stringify(value);
  }
  if (field.type === 'B64_IMAGE') return typeof value === 'string' ? 'image' : '';
  if (Array.isArray(value))
    return value.length <= 3 && value.every((item) => typeof item !== 'object')
      ? value.join(', ')
      : `${value.length} items`;
  if (typeof value === 'object') return JSON.stringify(value).slice(0, 60);
  return String(value);
}

/**
 * Without `expand`: the display text of the records the page's references point to, one list
 * request per reference field (`key=a&key=b…`, which ORs the values), when the target can be
 * listed, has a one-field key and a display field other than its key.
 */
async function displayNames(
  credential: Credential | undefined,
  entity: Entity,
  entities: readonly Entity[],
  rows: readonly JsonObject[],
): Promise<Map<string, Map<string, string>>> {
  const result = new Map<string, Map<string, string>>();
  await Promise.all(
    entity.fields.map(async (field) => {
      if (field.type !== 'ENTITY_REF') return;
      const target = entities.find(
        (item) => item.name === (field.entityRef?.entity ?? '').toUpperCase(),
      );
      const key = target?.key[0];
      if (target === undefined || key === undefined || target.key.length !== 1) return;
      const display = displayField(target);
      if (display === key || !target.allowed.has('GET_LIST')) return;
      const ids = [
        ...new Set(
          rows
            .map((row) => row[field.name])
            .filter((value) => typeof value === 'string' || typeof value === 'number'),
        ),
      ];
      if (ids.length === 0) return;
      const params = new URLSearchParams();
      for (const id of ids) params.append(`${key}[EQUALS]`, String(id));
      params.set('limit', String(Math.min(ids.length, target.maxWindow ?? ids.length)));
      const answer = await call<JsonObject[]>(
        credential,
        'GET',
        `${target.path}?${params.toString()}`,
      ).catch(() => undefined);
      const names = new Map<string, string>();
      for (const record of answer?.data ?? []) {
        const text = record[display];
        if (typeof text === 'string' && text !== '') names.set(String(record[key]), text);
      }
      result.set(field.name, names);
    }),
  );
  return result;
}

/** A table cell; a reference links to the referenced record. */
function Cell(props: {
  value: Json | undefined;
  field: Field;
  entities: readonly Entity[];
  label?: string | undefined;
}): JSX.Element {
  const text = props.label ?? cellText(props.value, props.field, props.entities);
  if (props.field.type !== 'ENTITY_REF' || props.value === undefined || props.value === null)
    return <>{text}</>;
  const name = (props.field.entityRef?.entity ?? '').toUpperCase();
  const target = props.entities.find((entity) => entity.name === name);
  const value = props.value;
  const id =
    typeof value === 'object' && !Array.isArray(value)
      ? target === undefined
        ? ''
        : recordId(target, value)
      : String(value);
  if (target === undefined || !target.allowed.has('GET_BYID') || id === '') return <>{text}</>;
  return <a href={`#/${name}/r/${encodeURIComponent(id)}`}>{text}</a>;
}

export function ListView(props: ViewProps): JSX.Element {
  const { entity, credential } = props;
  const [filters, setFilters] = useState<Filter[]>([]);
  const [order, setOrder] = useState<{ field: string; descending: boolean } | undefined>(undefined);
  const [limit, setLimit] = useState(Math.min(25, entity.maxWindow ?? 25));
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [rows, setRows] = useState<JsonObject[]>([]);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [count, setCount] = useState<number | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [live, setLive] = useState(false);
  const [loading, setLoading] = useState(false);
  const [deleting, setDeleting] = useState<string | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [tick, setTick] = useState(0);
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  /** Per reference field, the display text of the referenced records on the page. */
  const [labels, setLabels] = useState<Map<string, Map<string, string>>>(new Map());
  const cursor = cursors[cursors.length - 1];
  const listable = entity.allowed.has('GET_LIST');
  // The references to expand: those whose target the caller may read.
  const references = entity.fields
    .filter((field) => {
      if (field.type !== 'ENTITY_REF') return false;
      const target = props.entities.find(
        (item) => item.name === (field.entityRef?.entity ?? '').toUpperCase(),
      );
      return target?.allowed.has('GET_BYID') === true;
    })
    .map((field) => field.name);

  const query = (paging: boolean): URLSearchParams => {
    const params = new URLSearchParams();
    for (const filter of filters)
      params.append(`${filter.field}[${filter.operator}]`, filter.value);
    if (search !== '' && entity.features.has('q')) params.set('q', search);
    if (order !== undefined) params.set('orderBy', `${order.descending ? '-' : ''}${order.field}`);
    if (paging) {
      params.set('limit', String(limit));
      if (cursor !== undefined) params.set('cursor', cursor);
      if (entity.features.has('count')) params.set('count', 'true');
      // Only the columns shown, when the service can select fields.
      if (entity.features.has('fields') && hidden.size > 0) {
        const shown = entity.fields.filter((field) => !hidden.has(field.name));
        const names = new Set([...entity.key, ...shown.map((field) => field.name)]);
        params.set('fields', [...names].join(','));
      }
      if (entity.features.has('expand') && references.length > 0)
        params.set('expand', references.join(','));
    }
    return params;
  };

  useEffect(() => {
    if (!listable) return;
    let stale = false;
    setLoading(true);
    const load = async (): Promise<void> => {
      try {
        const answer = await call<JsonObject[]>(
          credential,
          'GET',
          `${entity.path}?${query(true).toString()}`,
        );
        if (stale) return;
        const names = entity.features.has('expand')
          ? new Map<string, Map<string, string>>()
          : await displayNames(credential, entity, props.entities, answer.data);
        if (stale) return;
        setLabels(names);
        setRows(answer.data);
        setNext(typeof answer.meta['next'] === 'string' ? answer.meta['next'] : undefined);
        setError(undefined);
        if (typeof answer.meta['count'] === 'number') setCount(answer.meta['count']);
        else {
          const counted = await call<{ count: number }>(
            credential,
            'GET',
            `/entity/${entity.name.toLowerCase()}/recordCounts?${query(false).toString()}`,
          ).catch(() => undefined);
          if (!stale) setCount(counted?.data.count);
        }
      } catch (caught) {
        if (!stale) setError(caught instanceof Error ? caught.message : String(caught));
      } finally {
        if (!stale) setLoading(false);
      }
    };
    void load();
    return () => {
      stale = true;
    };
  }, [
    entity.name,
    JSON.stringify(filters),
    order?.field,
    order?.descending,
    limit,
    search,
    cursor,
    tick,
    [...hidden].join(','),
  ]);

  // Live: every change of this entity reloads the page shown (a burst reloads once).
  useEffect(() => {
    if (!listable) return undefined;
    let timer: number | undefined;
    const stop = follow(
      credential,
      [entity.name],
      () => {
        window.clearTimeout(timer);
        timer = window.setTimeout(() => setTick((value) => value + 1), 100);
      },
      setLive,
    );
    return () => {
      window.clearTimeout(timer);
      stop();
    };
  }, [entity.name, credential?.value]);

  const restart = (): void => setCursors([undefined]);
  const columns = entity.fields.filter((field) => !hidden.has(field.name));

  if (!listable)
    return (
      <section aria-labelledby="title">
        <Header {...props} />
        <p>
          Records of {entity.displayName} cannot be listed{' '}
          {entity.allowed.size > 0 ? '(not allowed by the REST configuration or your roles)' : ''}.
        </p>
        <OpenById {...props} />
      </section>
    );

  return (
    <section aria-labelledby="title">
      <Header {...props} />
      {entity.features.has('q') ? (
        <div class="search">
          <label for="search">Search {entity.displayName}</label>
          <input
            id="search"
            type="search"
            value={search}
            onInput={(event) => {
              setSearch(event.currentTarget.value);
              restart();
            }}
          />
        </div>
      ) : null}
      <FilterBar
        fields={entity.fields}
        filters={filters}
        onChange={(next) => {
          setFilters(next);
          restart();
        }}
      />
      <details class="columns">
        <summary>Columns</summary>
        <ul>
          {entity.fields.map((field) => (
            <li>
              <input
                type="checkbox"
                id={`column-${field.name}`}
                checked={!hidden.has(field.name)}
                disabled={entity.key.includes(field.name)}
                onChange={(event) => {
                  const next = new Set(hidden);
                  if (event.currentTarget.checked) next.delete(field.name);
                  else next.add(field.name);
                  setHidden(next);
                }}
              />
              <label for={`column-${field.name}`}>{labelOf(field)}</label>
            </li>
          ))}
        </ul>
      </details>
      <div class="list-status" role="status" aria-live="polite">
        {count === undefined ? '' : `${count} record${count === 1 ? '' : 's'}`}
        {loading ? ' · loading…' : ''}
        <span class={live ? 'live on' : 'live'}>{live ? ' · live' : ' · not live'}</span>
        {notice === undefined ? '' : ` · ${notice}`}
      </div>
      {error === undefined ? null : (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">{entity.displayName} records</caption>
          <thead>
            <tr>
              {columns.map((field) => {
                const sortable =
                  SORTABLE.has(field.type) &&
                  (entity.orderable === undefined || entity.orderable.has(field.name));
                const sorted = order?.field === field.name;
                return (
                  <th
                    scope="col"
                    aria-sort={sorted ? (order.descending ? 'descending' : 'ascending') : undefined}
                  >
                    {sortable ? (
                      <button
                        type="button"
                        class="sort"
                        onClick={() => {
                          setOrder(
                            sorted && !order.descending
                              ? { field: field.name, descending: true }
                              : { field: field.name, descending: false },
                          );
                          restart();
                        }}
                      >
                        {labelOf(field)}
                        <span aria-hidden="true">
                          {sorted ? (order.descending ? ' ▼' : ' ▲') : ''}
                        </span>
                      </button>
                    ) : (
                      labelOf(field)
                    )}
                  </th>
                );
              })}
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((record) => {
              const id = recordId(entity, record);
              return (
                <tr key={id}>
                  {columns.map((field) => (
                    <td>
                      <Cell
                        value={record[field.name]}
                        field={field}
                        entities={props.entities}
                        label={labels.get(field.name)?.get(String(record[field.name]))}
                      />
                    </td>
                  ))}
                  <td class="actions">
                    <a
                      href={`#/${entity.name}/r/${encodeURIComponent(id)}`}
                      aria-label={`View ${id}`}
                    >
                      View
                    </a>
                    {entity.allowed.has('UPDATE') ? (
                      <a
                        href={`#/${entity.name}/r/${encodeURIComponent(id)}/edit`}
                        aria-label={`Edit ${id}`}
                      >
                        Edit
                      </a>
                    ) : null}
                    {entity.allowed.has('DELETE') ? (
                      <button
                        type="button"
                        class="danger"
                        aria-label={`Delete ${id}`}
                        onClick={() => setDeleting(id)}
                      >
                        Delete
                      </button>
                    ) : null}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {rows.length === 0 && !loading ? <p>No records.</p> : null}
      <nav class="pager" aria-label="Pages">
        <button
          type="button"
          disabled={cursors.length <= 1}
          onClick={() => setCursors(cursors.slice(0, -1))}
        >
          Previous page
        </button>
        <span>Page {cursors.length}</span>
        <button
          type="button"
          disabled={next === undefined}
          onClick={() => setCursors([...cursors, next])}
        >
          Next page
        </button>
        <label for="page-size">Per page</label>
        <select
          id="page-size"
          value={String(limit)}
          onChange={(event) => {
            setLimit(Number(event.currentTarget.value));
            restart();
          }}
        >
          {[10, 25, 50, 100]
            .filter((size) => entity.maxWindow === undefined || size <= entity.maxWindow)
            .concat(
              entity.maxWindow !== undefined && entity.maxWindow < 10 ? [entity.maxWindow] : [],
            )
            .map((size) => (
              <option value={String(size)}>{size}</option>
            ))}
        </select>
      </nav>
      {deleting === undefined ? null : (
        <ConfirmDelete
          {...props}
          id={deleting}
          onDone={(message) => {
            setDeleting(undefined);
            if (message !== undefined) setNotice(message);
            setTick((value) => value + 1);
          }}
        />
      )}
    </section>
  );
}

function Header(props: ViewProps & { title?: string }): JSX.Element {
  const { entity } = props;
  return (
    <header class="view-header">
      <h1 id="title" tabIndex={-1}>
        {props.title ?? entity.displayName}
      </h1>
      {props.title === undefined && entity.description !== undefined ? (
        <p class="help">{entity.description}</p>
      ) : null}
      {props.title === undefined && entity.allowed.has('NEW') ? (
        <a class="button primary" href={`#/${entity.name}/new`}>
          New {entity.displayName}
        </a>
      ) : null}
    </header>
  );
}

function OpenById(props: ViewProps): JSX.Element | null {
  const [id, setId] = useState('');
  if (!props.entity.allowed.has('GET_BYID')) return null;
  return (
    <form
      class="inline"
      onSubmit={(event) => {
        event.preventDefault();
        if (id !== '') props.navigate(`#/${props.entity.name}/r/${encodeURIComponent(id)}`);
      }}
    >
      <label for="open-id">Open the record with id</label>
      <input
        id="open-id"
        type="text"
        value={id}
        onInput={(event) => setId(event.currentTarget.value)}
      />
      <button type="submit">Open</button>
    </form>
  );
}

function FilterBar(props: {
  fields: readonly Field[];
  filters: readonly Filter[];
  onChange: (filters: Filter[]) => void;
}): JSX.Element {
  const filterable = flatten(props.fields).filter(([, field]) => operatorsOf(field).length > 0);
  const [fieldName, setFieldName] = useState(filterable[0]?.[0] ?? '');
  const field = filterable.find(([name]) => name === fieldName)?.[1];
  const operators = field === undefined ? [] : operatorsOf(field);
  const [operator, setOperator] = useState('EQUALS');
  const [value, setValue] = useState('');
  const chosenOperator = operators.includes(operator) ? operator : (operators[0] ?? 'EQUALS');
  return (
    <div class="filters">
      <form
        class="inline"
        aria-label="Add a filter"
        onSubmit={(event) => {
          event.preventDefault();
          if (field === undefined) return;
          // A date-time picked in local time is sent as UTC, as the forms do.
          const local = field.type === 'DATE_TIME' ? new Date(value) : undefined;
          const sent =
            local !== undefined && !Number.isNaN(local.getTime()) ? local.toISOString() : value;
          props.onChange([
            ...props.filters,
            { field: fieldName, operator: chosenOperator, value: sent },
          ]);
          setValue('');
        }}
      >
        <label for="filter-field">Filter on</label>
        <select
          id="filter-field"
          value={fieldName}
          onChange={(event) => setFieldName(event.currentTarget.value)}
        >
          {filterable.map(([name, item]) => (
            <option value={name}>{name === item.name ? labelOf(item) : name}</option>
          ))}
        </select>
        <label for="filter-operator">Operator</label>
        <select
          id="filter-operator"
          value={chosenOperator}
          onChange={(event) => setOperator(event.currentTarget.value)}
        >
          {operators.map((name) => (
            <option value={name}>{name}</option>
          ))}
        </select>
        <label for="filter-value">Value</label>
        {field?.type === 'BOOL' ? (
          <select
            id="filter-value"
            value={value}
            onChange={(event) => setValue(event.currentTarget.value)}
          >
            <option value="">—</option>
            <option value="true">true</option>
            <option value="false">false</option>
          </select>
        ) : field?.type === 'ENUM' || field?.type === 'SELECT' ? (
          <select
            id="filter-value"
            value={value}
            onChange={(event) => setValue(event.currentTarget.value)}
          >
            <option value="">—</option>
            {(field.type === 'ENUM'
              ? (field.enums ?? [])
              : (field.select?.elems ?? []).map((elem) => elem.value)
            ).map((item) => (
              <option value={item}>{item}</option>
            ))}
          </select>
        ) : (
          <input
            id="filter-value"
            type={
              field?.type === 'DATE'
                ? 'date'
                : field?.type === 'DATE_TIME'
                  ? 'datetime-local'
                  : 'text'
            }
            value={value}
            onInput={(event) => setValue(event.currentTarget.value)}
          />
        )}
        <button type="submit">Add filter</button>
      </form>
      {props.filters.length === 0 ? null : (
        <ul class="chips" aria-label="Filters">
          {props.filters.map((filter, index) => (
            <li>
              <span>
                {filter.field} {filter.operator} “{filter.value}”
              </span>
              <button
                type="button"
                aria-label={`Remove filter ${filter.field} ${filter.operator} ${filter.value}`}
                onClick={() => props.onChange(props.filters.filter((_, at) => at !== index))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Top-level fields and the fields of OBJECTs, by dotted path. */
function flatten(fields: readonly Field[], prefix = ''): [string, Field][] {
  return fields.flatMap((field): [string, Field][] =>
    field.type === 'OBJECT'
      ? flatten(field.object?.fields ?? [], `${prefix}${field.name}.`)
      : [[`${prefix}${field.name}`, field]],
  );
}

function ConfirmDelete(
  props: ViewProps & { id: string; onDone: (message?: string) => void },
): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | undefined>(undefined);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="delete-title" onClose={() => props.onDone()}>
      <h2 id="delete-title">Delete {props.id}?</h2>
      <p>
        The record {props.id} of {props.entity.displayName} will be deleted. This cannot be undone.
      </p>
      {error === undefined ? null : (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      <div class="buttons">
        <button
          type="button"
          class="danger"
          onClick={() => {
            call(props.credential, 'DELETE', recordPath(props.entity, props.id))
              .then(() => {
                dialog.current?.close();
                props.onDone(`Deleted ${props.id}`);
              })
              .catch((caught: unknown) =>
                setError(caught instanceof Error ? caught.message : String(caught)),
              );
          }}
        >
          Delete
        </button>
        {/* biome-ignore lint/a11y/noAutofocus: a delete confirmation opens on its safe choice (the WAI-ARIA alert dialog pattern), not on Delete */}
        <button type="button" autoFocus onClick={() => dialog.current?.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}

export function RecordView(props: ViewProps & { id: string }): JSX.Element {
  const { entity } = props;
  const [record, setRecord] = useState<JsonObject | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState(false);
  useEffect(() => {
    call<JsonObject>(props.credential, 'GET', recordPath(entity, props.id))
      .then((answer) => setRecord(answer.data))
      .catch((caught: unknown) =>
        setError(caught instanceof Error ? caught.message : String(caught)),
      );
  }, [entity.name, props.id]);
  return (
    <section aria-labelledby="title">
      <Header {...props} title={`${entity.displayName} ${props.id}`} />
      <p>
        <a href={`#/${entity.name}`}>Back to {entity.displayName}</a>
      </p>
      {error === undefined ? null : (
        <p class="alert" role="alert">
          {error}
        </p>
      )}
      {record === undefined ? null : (
        <>
          <dl class="record">
            {entity.fields.map((field) => (
              <>
                <dt>{labelOf(field)}</dt>
                <dd>
                  {field.type === 'B64_IMAGE' && typeof record[field.name] === 'string' ? (
                    <img src={record[field.name] as string} alt={labelOf(field)} />
                  ) : field.type === 'ENTITY_REF' &&
                    record[field.name] !== undefined &&
                    typeof record[field.name] !== 'object' ? (
                    <a
                      href={`#/${(field.entityRef?.entity ?? '').toUpperCase()}/r/${encodeURIComponent(String(record[field.name]))}`}
                    >
                      {String(record[field.name])}
                    </a>
                  ) : record[field.name] === undefined ? (
                    <span class="help">—</span>
                  ) : typeof record[field.name] === 'object' ? (
                    <pre>{JSON.stringify(record[field.name], null, 2)}</pre>
                  ) : (
                    String(record[field.name])
                  )}
                </dd>
              </>
            ))}
          </dl>
          <div class="buttons">
            {entity.allowed.has('UPDATE') ? (
              <a
                class="button primary"
                href={`#/${entity.name}/r/${encodeURIComponent(props.id)}/edit`}
              >
                Edit
              </a>
            ) : null}
            {entity.allowed.has('DELETE') ? (
              <button type="button" class="danger" onClick={() => setDeleting(true)}>
                Delete
              </button>
            ) : null}
          </div>
        </>
      )}
      {deleting ? (
        <ConfirmDelete
          {...props}
          onDone={(message) => {
            setDeleting(false);
            if (message !== undefined) props.navigate(`#/${entity.name}`);
          }}
        />
      ) : null}
    </section>
  );
}

/** The create form (no `id`) or the edit form (PUT with If-Match of the record's ETag). */
export function FormView(props: ViewProps & { id?: string }): JSX.Element {
  const { entity } = props;
  const editing = props.id !== undefined;
  // A new record of a single-record entity starts with its one id.
  const [record, setRecord] = useState<JsonObject | undefined>(
    editing
      ? undefined
      : entity.singleRecord && entity.key[0] !== undefined
        ? { [entity.key[0]]: entity.singleRecordId }
        : {},
  );
  const [etag, setEtag] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const [errors, setErrors] = useState<Map<string, string[]>>(new Map());
  const [problem, setProblem] = useState<
    { reason: string; conflict: boolean; others: string[] } | undefined
  >(undefined);
  const [saving, setSaving] = useState(false);
  const alert = useRef<HTMLDivElement>(null);

  const load = (): void => {
    if (props.id === undefined) return;
    call<JsonObject>(props.credential, 'GET', recordPath(entity, props.id))
      .then((answer) => {
        setRecord(answer.data);
        setEtag(answer.etag);
        setErrors(new Map());
        setProblem(undefined);
        setVersion((value) => value + 1);
      })
      .catch((caught: unknown) =>
        setProblem({
          reason: caught instanceof Error ? caught.message : String(caught),
          conflict: false,
          others: [],
        }),
      );
  };
  useEffect(load, [entity.name, props.id]);
  useEffect(() => {
    if (problem !== undefined) alert.current?.focus();
  }, [problem]);

  if (record === undefined)
    return (
      <section aria-labelledby="title">
        <Header {...props} title={`Edit ${entity.displayName} ${props.id ?? ''}`} />
        {problem === undefined ? (
          <p>Loading…</p>
        ) : (
          <p class="alert" role="alert">
            {problem.reason}
          </p>
        )}
      </section>
    );

  const save = async (): Promise<void> => {
    setSaving(true);
    try {
      const answer =
        props.id === undefined
          ? await call<JsonObject>(props.credential, 'POST', entity.path, {
              body: { data: record },
            })
          : await call<JsonObject>(props.credential, 'PUT', recordPath(entity, props.id), {
              body: { data: record },
              headers: etag === null ? {} : { 'If-Match': etag },
            });
      props.navigate(`#/${entity.name}/r/${encodeURIComponent(recordId(entity, answer.data))}`);
    } catch (caught) {
      if (!(caught instanceof ApiError)) {
        setProblem({ reason: String(caught), conflict: false, others: [] });
        return;
      }
      const byPath = new Map<string, string[]>();
      const known = new Set<string>();
      const collect = (fields: readonly Field[], prefix: string): void => {
        for (const field of fields) {
          known.add(`${prefix}${field.name}`);
          if (field.type === 'OBJECT')
            collect(field.object?.fields ?? [], `${prefix}${field.name}.`);
        }
      };
      collect(entity.fields, '');
      const others: string[] = [];
      for (const issue of caught.issues) {
        const path = issue.path.join('.');
        const top = String(issue.path[0] ?? '');
        if (path !== '' && (known.has(path) || known.has(top)))
          byPath.set(path, [...(byPath.get(path) ?? []), issue.message]);
        else others.push(issue.message);
      }
      setErrors(byPath);
      setProblem({
        reason:
          caught.status === 412
            ? 'Someone else changed this record after you opened it, so your changes were not saved (412 Precondition Failed). Reload it to see the current version, then make your changes again.'
            : caught.message,
        conflict: caught.status === 412,
        others,
      });
    } finally {
      setSaving(false);
    }
  };

  const context = {
    credential: props.credential,
    entities: props.entities,
    errors,
    locked: new Set(editing ? entity.key : []),
    edited: (path: string) =>
      setErrors((current) => {
        if (!current.has(path)) return current;
        const copy = new Map(current);
        copy.delete(path);
        return copy;
      }),
  };
  const title = editing ? `Edit ${entity.displayName} ${props.id}` : `New ${entity.displayName}`;
  return (
    <section aria-labelledby="title">
      <Header {...props} title={title} />
      <div
        ref={alert}
        tabIndex={-1}
        class={problem === undefined ? '' : 'alert'}
        role={problem === undefined ? undefined : 'alert'}
      >
        {problem === undefined ? null : (
          <>
            <p>{problem.reason}</p>
            {problem.others.length > 0 ? (
              <ul>
                {problem.others.map((message) => (
                  <li>{message}</li>
                ))}
              </ul>
            ) : null}
            {errors.size > 0 ? (
              <ul>
                {[...errors.entries()].map(([path, messages]) => (
                  <li>
                    <a
                      href={`#${idOf(path.split('.'))}`}
                      onClick={(event) => {
                        event.preventDefault();
                        document.getElementById(`f-${path.split('.').join('-')}`)?.focus();
                      }}
                    >
                      {messages.join(' ')}
                    </a>
                  </li>
                ))}
              </ul>
            ) : null}
            {problem.conflict ? (
              <button type="button" class="primary" onClick={load}>
                Reload the record
              </button>
            ) : null}
          </>
        )}
      </div>
      <form
        key={version}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void save();
        }}
      >
        <FieldList
          fields={entity.fields}
          value={record}
          path={[]}
          context={context}
          onChange={setRecord}
        />
        <div class="buttons">
          <button type="submit" class="primary" disabled={saving}>
            {editing ? 'Save' : 'Create'}
          </button>
          <a
            class="button"
            href={
              editing
                ? `#/${entity.name}/r/${encodeURIComponent(props.id ?? '')}`
                : `#/${entity.name}`
            }
          >
            Cancel
          </a>
        </div>
      </form>
    </section>
  );
}
