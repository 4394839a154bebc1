/** One form control per field type (SPEC §14); every control is labelled and keyboard-usable. */
import { useRef, useState } from 'preact/hooks';
import type { ComponentChildren, JSX } from 'preact';
import {
  call,
  displayField,
  labelOf,
  recordId,
  type Credential,
  type Entity,
  type Field,
  type Json,
  type JsonObject,
} from './api.js';

/** What every control gets: where it is, its value, the server's messages by path. */
export interface ControlContext {
  readonly credential: Credential | undefined;
  readonly entities: readonly Entity[];
  /** Server messages by path (`dimensions.height`, `ratings.1`). */
  readonly errors: ReadonlyMap<string, readonly string[]>;
  /** The key fields, read-only when editing (a rename is not offered). */
  readonly locked: ReadonlySet<string>;
  /** Called with a control's path when its value changes (its server message is then stale). */
  readonly edited?: (path: string) => void;
}

interface ControlProps {
  readonly field: Field;
  readonly path: readonly (string | number)[];
  readonly value: Json | undefined;
  readonly onChange: (value: Json | undefined) => void;
  readonly context: ControlContext;
  /** Label text; the field's display name by default. */
  readonly label?: string;
}

export function idOf(path: readonly (string | number)[]): string {
  return `f-${path.join('-').replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

function Messages(props: {
  id: string;
  messages: readonly string[] | undefined;
}): JSX.Element | null {
  if (props.messages === undefined || props.messages.length === 0) return null;
  return (
    <p class="field-error" id={props.id}>
      {props.messages.join(' ')}
    </p>
  );
}

/** A labelled scalar control with its help text and server messages. */
function Labelled(props: {
  field: Field;
  path: readonly (string | number)[];
  context: ControlContext;
  label?: string | undefined;
  hint?: string | undefined;
  children: (attributes: Record<string, string | boolean | undefined>) => JSX.Element;
}): JSX.Element {
  const id = idOf(props.path);
  const messages = props.context.errors.get(props.path.join('.'));
  const described = [
    props.field.description === undefined ? undefined : `${id}-help`,
    props.hint === undefined ? undefined : `${id}-hint`,
    messages === undefined ? undefined : `${id}-error`,
  ].filter((part) => part !== undefined);
  return (
    <div class={`field${messages === undefined ? '' : ' invalid'}`}>
      <label for={id}>
        {props.label ?? labelOf(props.field)}
        {props.field.required === true ? <span aria-hidden="true"> *</span> : null}
        <span class="type" aria-hidden="true">
          {' '}
          {props.field.type}
        </span>
      </label>
      {props.children({
        id,
        'aria-describedby': described.length > 0 ? described.join(' ') : undefined,
        'aria-invalid': messages === undefined ? undefined : 'true',
        'aria-required': props.field.required === true ? 'true' : undefined,
      })}
      {props.field.description === undefined ? null : (
        <p class="help" id={`${id}-help`}>
          {props.field.description}
        </p>
      )}
      {props.hint === undefined ? null : (
        <p class="field-error" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <Messages id={`${id}-error`} messages={messages} />
    </div>
  );
}

const NUMBER = {
  INTEGER: { pattern: /^[-+]?\d+$/, hint: 'Enter a whole number' },
  DOUBLE: { pattern: /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, hint: 'Enter a number' },
  DECIMAL: { pattern: /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, hint: 'Enter a decimal number' },
} as const;

function NumberControl(props: ControlProps): JSX.Element {
  const type = props.field.type as keyof typeof NUMBER;
  const [text, setText] = useState(
    props.value === undefined || props.value === null ? '' : String(props.value),
  );
  const valid = text.trim() === '' || NUMBER[type].pattern.test(text.trim());
  return (
    <Labelled {...props} hint={valid ? undefined : NUMBER[type].hint}>
      {(attributes) => (
        <input
          {...attributes}
          type="text"
          inputMode={type === 'INTEGER' ? 'numeric' : 'decimal'}
          value={text}
          onInput={(event) => {
            const next = event.currentTarget.value;
            setText(next);
            const trimmed = next.trim();
            if (trimmed === '') props.onChange(undefined);
            else if (!NUMBER[type].pattern.test(trimmed)) props.onChange(trimmed);
            else props.onChange(type === 'DECIMAL' ? trimmed : Number(trimmed));
          }}
        />
      )}
    </Labelled>
  );
}

/** `2026-11-27T10:00:00.000Z` as the value of a `datetime-local` input, in local time. */
function localDateTime(value: Json | undefined): string {
  if (typeof value !== 'string' || value === '') return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

function TextLike(props: ControlProps & { inputType: string }): JSX.Element {
  const value = props.value;
  return (
    <Labelled {...props}>
      {(attributes) => (
        <input
          {...attributes}
          type={props.inputType}
          readOnly={props.context.locked.has(props.path.join('.'))}
          step={props.inputType === 'datetime-local' ? 1 : undefined}
          value={
            props.inputType === 'datetime-local'
              ? localDateTime(value)
              : typeof value === 'string'
                ? value
                : value === undefined || value === null
                  ? ''
                  : String(value)
          }
          onInput={(event) => {
            const text = event.currentTarget.value;
            if (text === '') props.onChange(undefined);
            else if (props.inputType === 'datetime-local') {
              const date = new Date(text);
              props.onChange(Number.isNaN(date.getTime()) ? text : date.toISOString());
            } else props.onChange(text);
          }}
        />
      )}
    </Labelled>
  );
}

function Choice(props: ControlProps): JSX.Element {
  const options =
    props.field.type === 'ENUM'
      ? (props.field.enums ?? []).map((value) => ({ value, label: value }))
      : (props.field.select?.elems ?? []).map((elem) => ({
          value: elem.value,
          label: elem.displayName ?? elem.value,
        }));
  const value = typeof props.value === 'string' ? props.value : '';
  return (
    <Labelled {...props}>
      {(attributes) => (
        <select
          {...attributes}
          value={value}
          disabled={props.context.locked.has(props.path.join('.'))}
          onChange={(event) => {
            const next = event.currentTarget.value;
            props.onChange(next === '' ? undefined : next);
          }}
        >
          <option value="">—</option>
          {options.map((option) => (
            <option value={option.value}>{option.label}</option>
          ))}
          {value !== '' && !options.some((option) => option.value === value) ? (
            <option value={value}>{value}</option>
          ) : null}
        </select>
      )}
    </Labelled>
  );
}

function Checkbox(props: ControlProps): JSX.Element {
  const id = idOf(props.path);
  const messages = props.context.errors.get(props.path.join('.'));
  return (
    <div class={`field checkbox${messages === undefined ? '' : ' invalid'}`}>
      <input
        type="checkbox"
        id={id}
        checked={props.value === true}
        aria-describedby={messages === undefined ? undefined : `${id}-error`}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      <label for={id}>
        {props.label ?? labelOf(props.field)}
        <span class="type" aria-hidden="true">
          {' '}
          BOOL
        </span>
      </label>
      <Messages id={`${id}-error`} messages={messages} />
    </div>
  );
}

/** A searchable picker of the referenced entity's records (a combobox with a list box). */
function ReferencePicker(props: ControlProps): JSX.Element {
  const target = props.context.entities.find(
    (entity) => entity.name === props.field.entityRef?.entity.toUpperCase(),
  );
  const [text, setText] = useState(
    props.value === undefined || props.value === null ? '' : String(props.value),
  );
  const [options, setOptions] = useState<{ id: string; label: string }[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const searchable = target?.allowed.has('GET_LIST') === true;
  const timer = useRef<number | undefined>(undefined);
  const sequence = useRef(0);
  const id = idOf(props.path);

  const search = (query: string): void => {
    if (!searchable || target === undefined) return;
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => {
      const display = displayField(target);
      const params = new URLSearchParams({ limit: String(Math.min(10, target.maxWindow ?? 10)) });
      // Only the answer to the latest search is shown.
      const mine = ++sequence.current;
      if (query !== '') {
        if (target.features.has('q')) params.set('q', query);
        else params.set(`${display}[CONTAINS]`, query);
      }
      call<JsonObject[]>(props.context.credential, 'GET', `${target.path}?${params.toString()}`)
        .then((answer) => {
          if (mine !== sequence.current) return;
          setOptions(
            answer.data.map((record) => {
              const key = recordId(target, record);
              const label = record[display];
              return {
                id: key,
                label: typeof label === 'string' && label !== key ? `${label} (${key})` : key,
              };
            }),
          );
          setOpen(true);
          setActive(-1);
        })
        .catch(() => setOptions([]));
    }, 150);
  };
  const choose = (option: { id: string }): void => {
    setText(option.id);
    setOpen(false);
    props.onChange(convertKey(option.id, target));
  };
  return (
    <Labelled
      {...props}
      hint={searchable ? undefined : undefined}
      label={`${props.label ?? labelOf(props.field)} (${target?.displayName ?? props.field.entityRef?.entity ?? ''})`}
    >
      {(attributes) => (
        <div class="picker">
          <input
            {...attributes}
            type="text"
            role="combobox"
            autoComplete="off"
            aria-autocomplete="list"
            aria-expanded={open && options.length > 0 ? 'true' : 'false'}
            aria-controls={`${id}-options`}
            aria-activedescendant={open && active >= 0 ? `${id}-option-${active}` : undefined}
            placeholder={searchable ? 'Type to search, or the record id' : 'The record id'}
            value={text}
            onFocus={() => search(text)}
            onBlur={() => window.setTimeout(() => setOpen(false), 200)}
            onInput={(event) => {
              const next = event.currentTarget.value;
              setText(next);
              props.onChange(next === '' ? undefined : convertKey(next, target));
              search(next);
            }}
            onKeyDown={(event) => {
              if (event.key === 'ArrowDown') {
                event.preventDefault();
                setOpen(true);
                setActive((index) => Math.min(options.length - 1, index + 1));
              } else if (event.key === 'ArrowUp') {
                event.preventDefault();
                setActive((index) => Math.max(0, index - 1));
              } else if (
                event.key === 'Enter' &&
                open &&
                active >= 0 &&
                options[active] !== undefined
              ) {
                event.preventDefault();
                choose(options[active]);
              } else if (event.key === 'Escape') setOpen(false);
            }}
          />
          <div
            id={`${id}-options`}
            role="listbox"
            class="options"
            hidden={!open || options.length === 0}
            aria-label="Matching records"
          >
            {options.map((option, index) => (
              <div
                id={`${id}-option-${index}`}
                role="option"
                tabIndex={-1}
                aria-selected={index === active ? 'true' : 'false'}
                onMouseDown={(event) => {
                  event.preventDefault();
                  choose(option);
                }}
              >
                {option.label}
              </div>
            ))}
          </div>
        </div>
      )}
    </Labelled>
  );
}

/** A reference to an INTEGER-keyed entity is a number. */
function convertKey(text: string, target: Entity | undefined): Json {
  const keyField = target?.fields.find((field) => field.name === target.key[0]);
  return keyField?.type === 'INTEGER' && /^-?\d+$/.test(text) ? Number(text) : text;
}

function ImageControl(props: ControlProps): JSX.Element {
  const value = typeof props.value === 'string' ? props.value : '';
  const [problem, setProblem] = useState<string | undefined>(undefined);
  return (
    <Labelled {...props} hint={problem}>
      {(attributes) => (
        <div class="image">
          {value.startsWith('data:image/') ? (
            <img src={value} alt={`${labelOf(props.field)} preview`} />
          ) : null}
          <input
            {...attributes}
            type="file"
            accept="image/*"
            onChange={(event) => {
              const file = event.currentTarget.files?.[0];
              if (file === undefined) return;
              if (!file.type.startsWith('image/')) {
                setProblem(`${file.name} is not an image`);
                return;
              }
              setProblem(undefined);
              const reader = new FileReader();
              reader.onload = () => props.onChange(String(reader.result));
              reader.readAsDataURL(file);
            }}
          />
          {value === '' ? null : (
            <button type="button" onClick={() => props.onChange(undefined)}>
              Remove image
            </button>
          )}
        </div>
      )}
    </Labelled>
  );
}

/** A JSON editor for ANY (and any type the app does not know): the value is kept as it is. */
function JsonControl(props: ControlProps): JSX.Element {
  const [text, setText] = useState(
    props.value === undefined ? '' : JSON.stringify(props.value, null, 2),
  );
  const [problem, setProblem] = useState<string | undefined>(undefined);
  return (
    <Labelled {...props} hint={problem}>
      {(attributes) => (
        <textarea
          {...attributes}
          class="json"
          rows={Math.min(12, Math.max(3, text.split('\n').length))}
          value={text}
          onInput={(event) => {
            const next = event.currentTarget.value;
            setText(next);
            if (next.trim() === '') {
              setProblem(undefined);
              props.onChange(undefined);
              return;
            }
            try {
              props.onChange(JSON.parse(next) as Json);
              setProblem(undefined);
            } catch {
              setProblem('Not valid JSON yet: the last valid value is kept');
            }
          }}
        />
      )}
    </Labelled>
  );
}

function Group(props: {
  legend: string;
  path: readonly (string | number)[];
  context: ControlContext;
  children: ComponentChildren;
  actions?: JSX.Element;
}): JSX.Element {
  const messages = props.context.errors.get(props.path.join('.'));
  const id = idOf(props.path);
  return (
    <fieldset
      class={`group${messages === undefined ? '' : ' invalid'}`}
      id={id}
      aria-describedby={messages === undefined ? undefined : `${id}-error`}
    >
      <legend>{props.legend}</legend>
      {props.children}
      {props.actions ?? null}
      <Messages id={`${id}-error`} messages={messages} />
    </fieldset>
  );
}

function ObjectControl(props: ControlProps & { fields: readonly Field[] }): JSX.Element {
  const value = isObject(props.value) ? props.value : {};
  return (
    <Group
      legend={`${props.label ?? labelOf(props.field)} (${props.field.type})`}
      path={props.path}
      context={props.context}
    >
      <FieldList
        fields={props.fields}
        value={value}
        path={props.path}
        context={props.context}
        onChange={(next) => props.onChange(Object.keys(next).length === 0 ? undefined : next)}
      />
    </Group>
  );
}

/** Stable keys for list items, so removing one does not move another's local state. */
function useKeys(length: number): [number[], (keys: number[]) => void] {
  const counter = useRef(0);
  const [keys, setKeys] = useState<number[]>(() => Array.from({ length }, () => counter.current++));
  if (keys.length < length) {
    const more = [...keys];
    while (more.length < length) more.push(counter.current++);
    setKeys(more);
    return [more, setKeys];
  }
  return [keys, (next) => setKeys(next.map((key) => (key < 0 ? counter.current++ : key)))];
}

function ArrayControl(props: ControlProps): JSX.Element {
  const items = Array.isArray(props.value) ? props.value : [];
  const element = {
    name: '',
    ...props.field.array,
    type: props.field.array?.type ?? 'ANY',
  } as Field;
  const [keys, setKeys] = useKeys(items.length);
  const label = props.label ?? labelOf(props.field);
  const set = (next: Json[], nextKeys: number[]): void => {
    setKeys(nextKeys);
    props.onChange(next.length === 0 ? undefined : next);
  };
  return (
    <Group
      legend={`${label} (list of ${element.type})`}
      path={props.path}
      context={props.context}
      actions={
        <button type="button" onClick={() => set([...items, emptyOf(element)], [...keys, -1])}>
          Add to {label}
        </button>
      }
    >
      {items.length === 0 ? <p class="help">Empty</p> : null}
      <ol class="items">
        {items.map((item, index) => (
          <li key={keys[index]}>
            <Control
              field={element}
              path={[...props.path, index]}
              value={item}
              label={`${label} ${index + 1}`}
              context={props.context}
              onChange={(next) => {
                const copy = [...items];
                copy[index] = next === undefined ? null : next;
                props.onChange(copy);
              }}
            />
            <button
              type="button"
              class="remove"
              onClick={() =>
                set(
                  items.filter((_, at) => at !== index),
                  keys.filter((_, at) => at !== index),
                )
              }
            >
              Remove {label} {index + 1}
            </button>
          </li>
        ))}
      </ol>
    </Group>
  );
}

function DictionaryControl(props: ControlProps): JSX.Element {
  const value = isObject(props.value) ? props.value : {};
  const [entries, setEntries] = useState<[string, Json][]>(() => Object.entries(value));
  const [keys, setKeys] = useKeys(entries.length);
  const label = props.label ?? labelOf(props.field);
  const element: Field = {
    name: '',
    type: 'OBJECT',
    object: { fields: props.field.dict?.fields ?? [] },
  };
  const update = (next: [string, Json][], nextKeys = keys): void => {
    setEntries(next);
    setKeys(nextKeys);
    props.onChange(next.length === 0 ? undefined : Object.fromEntries(next));
  };
  return (
    <Group
      legend={`${label} (key/value)`}
      path={props.path}
      context={props.context}
      actions={
        <button type="button" onClick={() => update([...entries, ['', {}]], [...keys, -1])}>
          Add entry to {label}
        </button>
      }
    >
      <ol class="items">
        {entries.map(([key, item], index) => (
          <li key={keys[index]}>
            <div class="field">
              <label for={`${idOf(props.path)}-key-${index}`}>Key of entry {index + 1}</label>
              <input
                id={`${idOf(props.path)}-key-${index}`}
                type="text"
                value={key}
                onInput={(event) => {
                  const copy = [...entries];
                  copy[index] = [event.currentTarget.value, item];
                  update(copy);
                }}
              />
            </div>
            <Control
              field={element}
              path={[...props.path, key === '' ? `#${index}` : key]}
              value={item}
              label={`Value of ${key === '' ? `entry ${index + 1}` : key}`}
              context={props.context}
              onChange={(next) => {
                const copy = [...entries];
                copy[index] = [key, next ?? {}];
                update(copy);
              }}
            />
            <button
              type="button"
              class="remove"
              onClick={() =>
                update(
                  entries.filter((_, at) => at !== index),
                  keys.filter((_, at) => at !== index),
                )
              }
            >
              Remove entry {key === '' ? index + 1 : key}
            </button>
          </li>
        ))}
      </ol>
    </Group>
  );
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value a new list element starts with. */
function emptyOf(field: Field): Json {
  switch (field.type) {
    case 'OBJECT':
    case 'DICTIONARY':
      return {};
    case 'ARRAY':
      return [];
    case 'BOOL':
      return false;
    default:
      return null;
  }
}

/** The control of one field, by its type; an unknown type gets the JSON editor. */
export function Control(outer: ControlProps): JSX.Element {
  const props: ControlProps = {
    ...outer,
    onChange: (value) => {
      outer.context.edited?.(outer.path.join('.'));
      outer.onChange(value);
    },
  };
  switch (props.field.type) {
    case 'STRING':
      return <TextLike {...props} inputType="text" />;
    case 'DATE':
      return <TextLike {...props} inputType="date" />;
    case 'DATE_TIME':
      return <TextLike {...props} inputType="datetime-local" />;
    case 'INTEGER':
    case 'DOUBLE':
    case 'DECIMAL':
      return <NumberControl {...props} />;
    case 'BOOL':
      return <Checkbox {...props} />;
    case 'ENUM':
    case 'SELECT':
      return <Choice {...props} />;
    case 'ENTITY_REF':
      return <ReferencePicker {...props} />;
    case 'B64_IMAGE':
      return <ImageControl {...props} />;
    case 'OBJECT':
      return <ObjectControl {...props} fields={props.field.object?.fields ?? []} />;
    case 'ARRAY':
      return <ArrayControl {...props} />;
    case 'DICTIONARY':
      return <DictionaryControl {...props} />;
    default:
      return <JsonControl {...props} />;
  }
}

/** The controls of a list of fields, editing one object. Keys the schema does not name are kept. */
export function FieldList(props: {
  fields: readonly Field[];
  value: JsonObject;
  path: readonly (string | number)[];
  context: ControlContext;
  onChange: (value: JsonObject) => void;
}): JSX.Element {
  // The object the next change builds on: this list's own changes set it at once (so quick edits
  // before the next render build on each other), and each render sets it to what the form holds.
  // Set from an effect instead, it would run late under load and bring back an older value.
  const current = useRef(props.value);
  current.current = props.value;
  return (
    <>
      {props.fields.map((field) => (
        <Control
          key={field.name}
          field={field}
          path={[...props.path, field.name]}
          value={props.value[field.name]}
          context={props.context}
          onChange={(next) => {
            const copy = { ...current.current };
            if (next === undefined) delete copy[field.name];
            else copy[field.name] = next;
            current.current = copy;
            props.onChange(copy);
          }}
        />
      ))}
    </>
  );
}
