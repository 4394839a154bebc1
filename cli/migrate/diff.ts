/**
 * Compares the previous generation's model with the new one: which entities and fields were
 * added, removed, renamed (`renamedFrom`) or changed, whether each change keeps every stored
 * value, and the plan's steps and diagnostics. Rendering SQL is left to `sqlite.ts` and
 * `postgres.ts`, which read only the `EntityDiff`s.
 */
import type { Diagnostic } from '../diagnostics.js';
import type { EntityModel, FieldModel, SchemaModel } from '../model/types.js';
import type { SourcePosition } from '../schema/types.js';
import type { MigrationDiagnosticCode } from './codes.js';
import { classifyConversion, type Conversion } from './conversions.js';

/** A column that exists before and after (possibly renamed, converted or re-required). */
export interface KeptField {
  readonly old: FieldModel;
  readonly new: FieldModel;
  /** `undefined` when the stored values need no change. */
  readonly conversion: Conversion | undefined;
}

/** What happens to one entity's table. */
export type EntityDiff =
  | { readonly kind: 'create'; readonly new: EntityModel }
  | { readonly kind: 'drop'; readonly old: EntityModel }
  | {
      readonly kind: 'alter';
      readonly old: EntityModel;
      readonly new: EntityModel;
      readonly kept: readonly KeptField[];
      readonly added: readonly FieldModel[];
      readonly dropped: readonly FieldModel[];
      /** The key (fields, or a key field's storage) changes: the table is rebuilt. */
      readonly rekey: boolean;
    };

/** One step of a migration as the plan shows it. */
export interface MigrationStep {
  readonly description: string;
  /** The step deletes or alters stored data (needs --allow-data-loss). */
  readonly destructive: boolean;
}

export interface MigrationDiff {
  /** In the order the SQL runs: removed entities, changed ones, then new ones. */
  readonly entities: readonly EntityDiff[];
  readonly steps: readonly MigrationStep[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Whether a diff changes storage at all (SQL to write). */
export function hasStorageChange(diff: EntityDiff): boolean {
  if (diff.kind !== 'alter') return true;
  return (
    diff.rekey ||
    diff.old.tableName !== diff.new.tableName ||
    diff.old.name !== diff.new.name ||
    diff.added.length > 0 ||
    diff.dropped.length > 0 ||
    (diff.old.table.softDelete === true) !== (diff.new.table.softDelete === true) ||
    (diff.old.table.history === true && diff.new.table.history !== true) ||
    indexesChanged(diff) ||
    searchRebuilt(diff) ||
    diff.kept.some(
      (field) =>
        field.old.name !== field.new.name ||
        field.old.required !== field.new.required ||
        field.old.indexed !== field.new.indexed ||
        field.old.ciIndexed !== field.new.ciIndexed ||
        (field.conversion !== undefined && field.conversion.change.op !== 'identity'),
    )
  );
}

/**
 * Whether a change drops the entity's search (search.ts) before it and builds it again after:
 * `search` added, removed or changed, or the table renamed or rebuilt, or a searched column
 * renamed or changed (SQLite's triggers and PostgreSQL's generated column name the columns).
 */
export function searchRebuilt(diff: Extract<EntityDiff, { kind: 'alter' }>): boolean {
  const before = diff.old.table.search;
  const after = diff.new.table.search;
  if (before === undefined && after === undefined) return false;
  if (before === undefined || after === undefined) return true;
  if (JSON.stringify(before) !== JSON.stringify(after)) return true;
  if (diff.rekey || diff.old.tableName !== diff.new.tableName) return true;
  return diff.kept.some(
    (field) =>
      (before.fields.includes(field.old.name) || after.fields.includes(field.new.name)) &&
      (field.old.name !== field.new.name ||
        field.old.required !== field.new.required ||
        (field.conversion !== undefined && field.conversion.change.op !== 'identity')),
  );
}

/** The composite indexes an entity declares, as written (`[category, -price]`). */
export function declaredIndexes(entity: EntityModel): string[] {
  return [
    ...(entity.table.indexes ?? []).map(
      (columns) =>
        `[${columns.map(({ column, descending }) => (descending ? `-${column}` : column)).join(', ')}]`,
    ),
    ...(entity.table.unique ?? []).map((fields) => `unique [${fields.join(', ')}]`),
  ];
}

/** Whether the declared composite indexes differ (a renamed field's index counts as changed). */
export function indexesChanged(diff: Extract<EntityDiff, { kind: 'alter' }>): boolean {
  return declaredIndexes(diff.old).join('\n') !== declaredIndexes(diff.new).join('\n');
}

/**
 * Diffs `previous` (the entities of the last generation) against `next`. Changes that lose
 * data are diagnostics unless `allowDataLoss`; changes no flag can make safe (a required field
 * without default, an ambiguous rename) always are.
 */
export function diffModels(
  previous: readonly EntityModel[],
  next: SchemaModel,
  allowDataLoss: boolean,
): MigrationDiff {
  const context = new DiffContext(next, allowDataLoss);
  const pairs = matchByName(
    previous,
    next.entities,
    (entity) => entity.name,
    (entity, message) =>
      context.report(entityPosition(entity), 'MIGRATION_AMBIGUOUS_RENAME', message),
    'entity',
  );
  const dropped = previous.filter((entity) => !pairs.some((pair) => pair.old === entity));
  const diffs: EntityDiff[] = [];
  for (const old of dropped) diffs.push(context.dropEntity(old));
  for (const entity of next.entities) {
    const old = pairs.find((pair) => pair.new === entity)?.old;
    if (old !== undefined) diffs.push(context.alterEntity(old, entity));
  }
  for (const entity of next.entities) {
    if (!pairs.some((pair) => pair.new === entity)) diffs.push(context.createEntity(entity));
  }
  return { entities: diffs, steps: context.steps, diagnostics: context.diagnostics };
}

class DiffContext {
  readonly steps: MigrationStep[] = [];
  readonly diagnostics: Diagnostic[] = [];

  constructor(
    private readonly model: SchemaModel,
    private readonly allowDataLoss: boolean,
  ) {}

  report(at: SourcePosition, code: MigrationDiagnosticCode, message: string): void {
    this.diagnostics.push({ file: at.file, line: at.line, column: at.column, code, message });
  }

  step(description: string, destructive = false): void {
    this.steps.push({ description, destructive });
  }

  /** A change that loses data: a step when allowed, else a diagnostic. */
  private lossy(at: SourcePosition, code: MigrationDiagnosticCode, message: string, step: string) {
    if (this.allowDataLoss) this.step(step, true);
    else this.report(at, code, `${message}. Pass --allow-data-loss to accept this`);
  }

  createEntity(entity: EntityModel): EntityDiff {
    this.step(`Create entity ${entity.name} (table "${entity.tableName}")`);
    return { kind: 'create', new: entity };
  }

  dropEntity(old: EntityModel): EntityDiff {
    const message =
      `Entity ${old.name} is no longer in the schema: removing it deletes table "${old.tableName}" ` +
      `and every record in it (if it was renamed, add renamedFrom: ${old.name} to the entity's new definition)`;
    // A removed entity has no place in the new schema; the first schema file stands for it.
    const at = { file: this.model.sourceFiles[0] ?? old.sourceFile, line: 1, column: 1 };
    this.lossy(
      at,
      'MIGRATION_REMOVES_ENTITY',
      message,
      `Remove entity ${old.name}: table "${old.tableName}" and all its records are deleted`,
    );
    return { kind: 'drop', old };
  }

  alterEntity(old: EntityModel, entity: EntityModel): EntityDiff {
    if (old.name !== entity.name) {
      this.step(
        old.tableName === entity.tableName
          ? `Rename entity ${old.name} to ${entity.name} (records kept)`
          : `Rename entity ${old.name} to ${entity.name}: table "${old.tableName}" becomes "${entity.tableName}", records kept`,
      );
    }
    const pairs = matchByName(
      old.fields,
      entity.fields,
      (field) => field.name,
      (field, message) =>
        this.report(fieldPosition(entity, field), 'MIGRATION_AMBIGUOUS_RENAME', message),
      `field of entity ${entity.name}`,
    );
    // In declared order, so steps and SQL follow the schema as written.
    const kept = entity.fields.flatMap((after) => {
      const before = pairs.find((pair) => pair.new === after)?.old;
      return before === undefined
        ? []
        : [{ old: before, new: after, conversion: classifyConversion(before, after) }];
    });
    const added = entity.fields.filter((field) => !pairs.some((pair) => pair.new === field));
    const dropped = old.fields.filter((field) => !pairs.some((pair) => pair.old === field));
    const rekey = this.keyChange(old, entity, kept);
    for (const field of dropped) this.dropField(entity, field);
    for (const field of kept) this.renameField(entity, field);
    for (const field of kept) this.keepField(entity, field, rekey);
    for (const field of added) this.addField(entity, field);
    for (const field of kept) this.reindexField(entity, field);
    this.reindexEntity(old, entity);
    this.softDelete(old, entity);
    this.history(old, entity);
    const diff: EntityDiff = { kind: 'alter', old, new: entity, kept, added, dropped, rekey };
    this.search(diff);
    return diff;
  }

  /** `search` added, removed or changed: the search index is dropped and built again. */
  private search(diff: Extract<EntityDiff, { kind: 'alter' }>): void {
    const before = diff.old.table.search;
    const after = diff.new.table.search;
    const name = diff.new.name;
    if (JSON.stringify(before) === JSON.stringify(after)) return;
    if (after === undefined)
      this.step(`Stop full-text search of entity ${name}: its index dropped`);
    else
      this.step(
        `Build the full-text search of entity ${name} over ${after.fields.join(', ')} (language ${after.language}) from its records`,
      );
  }

  /** `softDelete` switched on (columns added) or off (soft-deleted records purged, SPEC §13). */
  private softDelete(old: EntityModel, entity: EntityModel): void {
    const before = old.table.softDelete === true;
    const after = entity.table.softDelete === true;
    if (!before && after) {
      this.step(`Keep deleted records of entity ${entity.name} (softDelete): records kept`);
    } else if (before && !after) {
      this.lossy(
        entityPosition(entity),
        'MIGRATION_REMOVES_SOFT_DELETE',
        `Entity ${entity.name} no longer has softDelete: its soft-deleted records would be purged`,
        `Stop keeping deleted records of entity ${entity.name}: its soft-deleted records are purged`,
      );
    }
  }

  /**
   * `history` switched off: the kept versions are deleted (SPEC §13). Switched on needs no step:
   * the runtime keeps versions in its own table from the next write on.
   */
  private history(old: EntityModel, entity: EntityModel): void {
    if (old.table.history === true && entity.table.history !== true) {
      this.lossy(
        entityPosition(entity),
        'MIGRATION_REMOVES_HISTORY',
        `Entity ${entity.name} no longer has history: its kept versions would be deleted`,
        `Stop keeping the history of entity ${entity.name}: its kept versions are deleted`,
      );
    }
  }

  private renameField(entity: EntityModel, field: KeptField): void {
    if (field.old.name === field.new.name) return;
    this.step(`Rename field ${entity.name}.${field.old.name} to ${field.new.name} (values kept)`);
  }

  private reindexField(entity: EntityModel, field: KeptField): void {
    const name = `${entity.name}.${field.new.name}`;
    if (field.old.indexed !== field.new.indexed) {
      this.step(field.new.indexed ? `Index field ${name}` : `Drop the index of field ${name}`);
    }
    if (field.old.ciIndexed !== field.new.ciIndexed) {
      this.step(
        field.new.ciIndexed
          ? `Index field ${name} case-insensitively`
          : `Drop the case-insensitive index of field ${name}`,
      );
    }
  }

  /** Steps for the composite indexes dropped and created (an index over a renamed field is both). */
  private reindexEntity(old: EntityModel, entity: EntityModel): void {
    const before = declaredIndexes(old);
    const after = declaredIndexes(entity);
    const named = (index: string): string =>
      index.startsWith('unique ')
        ? `unique index ${index.slice('unique '.length)}`
        : `index ${index}`;
    for (const index of before) {
      if (!after.includes(index)) this.step(`Drop ${named(index)} of entity ${entity.name}`);
    }
    for (const index of after) {
      if (before.includes(index)) continue;
      const check = index.startsWith('unique ')
        ? ' (the migration stops, listing them, if stored records share values)'
        : '';
      this.step(`Create ${named(index)} of entity ${entity.name}${check}`);
    }
  }

  private keyChange(old: EntityModel, entity: EntityModel, kept: readonly KeptField[]): boolean {
    const what = keyChangeOf(old, entity, kept);
    if (what === undefined) return false;
    this.lossy(
      entityPosition(entity),
      'MIGRATION_KEY_CHANGE',
      `Entity ${entity.name} changes its logical key: ${what}. Every record is re-keyed; records ` +
        `whose new key is missing or repeats another's are deleted, and record ids change`,
      `Re-key entity ${entity.name} (${what}): the table is rebuilt; records with a missing or ` +
        `duplicate new key are deleted`,
    );
    return true;
  }

  private dropField(entity: EntityModel, field: FieldModel): void {
    this.lossy(
      entityPosition(entity),
      'MIGRATION_REMOVES_FIELD',
      `Field '${field.name}' is no longer in entity ${entity.name}: removing it deletes its stored ` +
        `values (if it was renamed, add renamedFrom: ${field.name} to the renamed field)`,
      `Remove field ${entity.name}.${field.name}: its stored values are deleted`,
    );
  }

  private addField(entity: EntityModel, field: FieldModel): void {
    const at = fieldPosition(entity, field);
    const label = `${entity.name}.${field.name} (${field.type})`;
    if (!field.required) {
      this.step(
        field.default === undefined
          ? `Add optional field ${label}`
          : `Add optional field ${label}; existing records get ${JSON.stringify(field.default)}`,
      );
      return;
    }
    if (field.isKey) {
      this.step(`Add key field ${label}`);
      return;
    }
    if (field.default === undefined) {
      this.report(
        at,
        'MIGRATION_REQUIRED_WITHOUT_DEFAULT',
        `Field '${field.name}' of entity ${entity.name} is new and required, but existing records ` +
          `have no value for it; add a default (default: <value>, given to existing records) or ` +
          `add the field as optional first`,
      );
      return;
    }
    this.step(`Add required field ${label}; existing records get ${JSON.stringify(field.default)}`);
  }

  private keepField(entity: EntityModel, field: KeptField, rekey: boolean): void {
    const before = field.old;
    const after = field.new;
    const at = fieldPosition(entity, after);
    const name = `${entity.name}.${after.name}`;
    const conversion = field.conversion;
    if (conversion !== undefined && conversion.change.op !== 'identity') {
      const change = describeChange(before, after, conversion);
      if (conversion.loss === undefined) {
        this.step(`Convert field ${name} ${change}, every value kept`);
      } else if (!(rekey && after.isKey)) {
        this.lossy(
          at,
          'MIGRATION_LOSSY_TYPE_CHANGE',
          `Field '${after.name}' of entity ${entity.name} changes ${change}, which loses data: ` +
            `${conversion.loss}`,
          `Convert field ${name} ${change}: ${conversion.loss}`,
        );
      }
      if (conversion.resets && after.required && after.default === undefined && !after.isKey) {
        if (conversion.loss === undefined || this.allowDataLoss) {
          this.report(
            at,
            'MIGRATION_REQUIRED_WITHOUT_DEFAULT',
            `Field '${after.name}' of entity ${entity.name} is required, but stored values that ` +
              `do not survive the change (${conversion.loss ?? ''}) need a replacement; add a default (default: <value>)`,
          );
        }
      }
    }
    if (!before.required && after.required && !after.isKey) {
      if (after.default === undefined) {
        this.report(
          at,
          'MIGRATION_REQUIRED_WITHOUT_DEFAULT',
          `Field '${after.name}' of entity ${entity.name} becomes required, but existing records ` +
            `may have no value; add a default (default: <value>, given to records without one)`,
        );
      } else {
        this.step(
          `Make field ${name} required; records without a value get ${JSON.stringify(after.default)}`,
        );
      }
    }
    if (before.required && !after.required && !before.isKey) {
      this.step(`Make field ${name} optional`);
    }
  }
}

/**
 * How the primary key of an entity's table changes, or `undefined` when its stored values stay
 * valid. A single-record entity's key always holds `lkValue`, so becoming single-record or a new
 * `lkValue` re-keys too.
 */
function keyChangeOf(
  old: EntityModel,
  entity: EntityModel,
  kept: readonly KeptField[],
): string | undefined {
  const before = keyText(old);
  const after = keyText(entity);
  if (old.fixedKeyColumn !== undefined || entity.fixedKeyColumn !== undefined) {
    return before === after ? undefined : `its key changes from ${before} to ${after}`;
  }
  const renamed = old.lk.map((name) => kept.find((field) => field.old.name === name));
  const keyFields = renamed.flatMap((field) => (field === undefined ? [] : [field]));
  const sameFields =
    keyFields.length === old.lk.length &&
    keyFields.map((field) => field.new.name).join('\u0000') === entity.lk.join('\u0000');
  const storageChange = keyFields.some(
    (field) =>
      field.old.columnKind !== field.new.columnKind || field.conversion?.loss !== undefined,
  );
  if (!sameFields) return `its key changes from ${before} to ${after}`;
  if (storageChange) return `the storage type of its key field(s) ${after} changes`;
  if (entity.singleRecord && (!old.singleRecord || old.lkValue !== entity.lkValue)) {
    return old.singleRecord
      ? `the id of its single record changes from '${old.lkValue ?? ''}' to '${entity.lkValue ?? ''}'`
      : `it becomes a single-record entity whose key ${after} is always '${entity.lkValue ?? ''}'`;
  }
  return undefined;
}

/** `[id]`, or for an entity addressed by lkValue alone: `lkValue 'current'`. */
function keyText(entity: EntityModel): string {
  return entity.fixedKeyColumn === undefined
    ? `[${entity.lk.join(', ')}]`
    : `lkValue '${entity.lkValue ?? ''}'`;
}

/** `from INTEGER to DOUBLE`, or for a change within one type what changes: `values new → NEW`. */
function describeChange(before: FieldModel, after: FieldModel, conversion: Conversion): string {
  if (before.type !== after.type) return `from ${before.type} to ${after.type}`;
  const change = conversion.change;
  if (change.op === 'valueSet' && change.respell.length > 0 && change.complete) {
    const respelled = change.respell.map(([from, to]) => `${from} → ${to}`).join(', ');
    return `(${after.type} values respelled: ${respelled})`;
  }
  if (change.op === 'valueSet') return `(${after.type} values change)`;
  return `(${after.type} shape changes)`;
}

/**
 * Pairs old and new items by name (ignoring case, as SQL does), then by `renamedFrom`.
 * A `renamedFrom` of an item whose own name already existed is a leftover of an earlier
 * migration and is ignored.
 */
function matchByName<T extends { readonly name: string; readonly renamedFrom?: string }>(
  previous: readonly T[],
  next: readonly T[],
  nameOf: (item: T) => string,
  ambiguous: (item: T, message: string) => void,
  what: string,
): { old: T; new: T }[] {
  const key = (name: string): string => name.toLowerCase();
  const oldByName = new Map(previous.map((item) => [key(nameOf(item)), item]));
  const newNames = new Set(next.map((item) => key(nameOf(item))));
  const pairs: { old: T; new: T }[] = [];
  const claimed = new Map<T, T>();
  for (const item of next) {
    const old = oldByName.get(key(nameOf(item)));
    if (old !== undefined) {
      pairs.push({ old, new: item });
      claimed.set(old, item);
    }
  }
  const label = what === 'entity' ? 'entity' : 'field';
  for (const item of next) {
    const from = item.renamedFrom;
    if (from === undefined || pairs.some((pair) => pair.new === item)) continue;
    const old = oldByName.get(key(from));
    const known = previous.map(nameOf).join(', ');
    if (old === undefined) {
      ambiguous(
        item,
        `renamedFrom: ${from} of ${label} ${nameOf(item)} names no ${what} of the previous ` +
          `schema${known === '' ? '' : ` (it had ${known})`}; correct it or remove renamedFrom to add a new ${label}`,
      );
    } else if (newNames.has(key(from))) {
      ambiguous(
        item,
        `renamedFrom: ${from} of ${label} ${nameOf(item)} names a ${label} that still exists; ` +
          `a rename needs the old name to be gone`,
      );
    } else if (claimed.has(old)) {
      ambiguous(
        item,
        `renamedFrom: ${from} of ${label} ${nameOf(item)} is also claimed by ${nameOf(claimed.get(old)!)}; ` +
          `only one can take over its data`,
      );
    } else {
      pairs.push({ old, new: item });
      claimed.set(old, item);
    }
  }
  return pairs;
}

function entityPosition(entity: EntityModel): SourcePosition {
  return entity.position ?? { file: entity.sourceFile, line: 1, column: 1 };
}

function fieldPosition(entity: EntityModel, field: FieldModel): SourcePosition {
  return field.position ?? entityPosition(entity);
}
