/**
 * Migrations from schema changes: diffs the schema of the previous generation (the manifest's
 * snapshot) with the new model and writes one numbered migration per run, as a pair of files
 * `migrations/<seq>_<slug>_<hash8>.sqlite.sql` / `.postgres.sql`. The generated service applies
 * them at start-up (runtime `migrations.ts`). Pure: no disk, no clock. See docs/migrations.md.
 */
import { createHash } from 'node:crypto';
import type { Diagnostic } from '../diagnostics.js';
import { sortDiagnostics } from '../diagnostics.js';
import { headerLine } from '../header.js';
import { normalize } from '../model/normalize.js';
import type { EntityModel, SchemaModel } from '../model/types.js';
import { loadSchemas } from '../schema/index.js';
import type { JsonValue } from '../schema/types.js';
import {
  diffModels,
  hasStorageChange,
  indexesChanged,
  type EntityDiff,
  type MigrationStep,
} from './diff.js';
import { postgresStatements } from './postgres.js';
import { DIALECTS, type Dialect } from './sql.js';
import { sqliteStatements } from './sqlite.js';

export { MIGRATION_DIAGNOSTIC_CODES, type MigrationDiagnosticCode } from './codes.js';
export type { MigrationStep } from './diff.js';
import { constraintChecks, constraintSql, constraintSteps } from './constraints.js';
import { referenceChecks, referenceSql, referenceSteps } from './references.js';

/** Folder of the migration files inside the generated service. */
export const MIGRATIONS_DIR = 'migrations';

export interface MigrationOptions {
  /** Accept changes that delete or narrow stored data. */
  readonly allowDataLoss: boolean;
  /**
   * A reference that gains `onDelete` has its dangling values cleared by the migration (else the
   * migration only checks them, and fails listing them).
   */
  readonly clearDanglingReferences?: boolean;
  /** Names of the files already in `<out>/migrations` (with or without the folder). */
  readonly existingMigrations: readonly string[];
  /** Where the previous schema was read from, for its diagnostics (default `.entity-gen/manifest.json`). */
  readonly previousSchemaFile?: string;
  /** `previousSchema` loaded already (`loadPreviousSchema`), elsewhere or earlier. */
  readonly previous?: PreviousSchema;
}

/** The previous generation's schema, loaded: its entities and short hash, or why it does not load. */
export type PreviousSchema =
  | { readonly entities: readonly EntityModel[]; readonly hash: string }
  | { readonly diagnostics: Diagnostic[] };

/**
 * A rename the schema change applies (`renamedFrom`), with the names the generated code used
 * before and uses after, for rewriting the user's own code (cli/codemod).
 */
export interface SchemaRename {
  /** `entity`: the entity itself is renamed; `field`: one of its top-level fields. */
  readonly kind: 'entity' | 'field';
  readonly old: EntityNames;
  readonly new: EntityNames;
  /** For a field rename: its old and new name. */
  readonly field?: { readonly old: string; readonly new: string };
}

/** The names the generated code gives an entity. */
export interface EntityNames {
  /** As written in the schema, e.g. `ORDER_LINE`. */
  readonly name: string;
  /** Record type and type-name stem, e.g. `OrderLine`. */
  readonly typeName: string;
  /** e.g. `orderLine` (the hooks constant is `orderLineHooks`). */
  readonly camelName: string;
  /** Folder and hooks file name, e.g. `order-line`. */
  readonly fileName: string;
}

export interface MigrationPlan {
  /** The new migration's two files (paths under `migrations/`), or none when storage does not change or there are diagnostics. */
  readonly files: { path: string; contents: string }[];
  /** Entity and field renames of the change, entity renames first; also when no SQL is needed. */
  readonly renames: SchemaRename[];
  /** What the migration does, in order; destructive steps lose data. */
  readonly steps: MigrationStep[];
  /** Changes that are refused (or impossible), located in the schema. */
  readonly diagnostics: Diagnostic[];
}

/** Shown in diagnostics about the previous schema when the caller does not say where it was read. */
const DEFAULT_PREVIOUS_FILE = '.entity-gen/manifest.json';

/**
 * Plans the migration from `previousSchema` (the ENTITY documents recorded by the previous
 * generation; `undefined` on the first generation, which needs none: the service creates its
 * tables) to `model`.
 *
 * @example planMigrations(manifest.schema, model, { allowDataLoss: false, existingMigrations: [] })
 */
export function planMigrations(
  previousSchema: readonly JsonValue[] | undefined,
  model: SchemaModel,
  options: MigrationOptions,
): MigrationPlan {
  if (previousSchema === undefined) return { files: [], renames: [], steps: [], diagnostics: [] };
  const previous =
    options.previous ??
    loadPreviousSchema(previousSchema, options.previousSchemaFile ?? DEFAULT_PREVIOUS_FILE);
  if ('diagnostics' in previous)
    return { files: [], renames: [], steps: [], diagnostics: previous.diagnostics };
  const diff = diffModels(previous.entities, model, options.allowDataLoss);
  const renames = renamesOf(diff.entities);
  const clear = options.clearDanglingReferences === true;
  const checks = referenceChecks(diff.entities, model);
  const ruleChecks = constraintChecks(diff.entities);
  const diagnostics = sortDiagnostics(diff.diagnostics);
  // Only changes with SQL (an index flag on the first key column, say, has none).
  const changes = diff.entities.filter(
    (change) =>
      hasStorageChange(change) &&
      (sqliteStatements(change).length > 0 || postgresStatements(change).length > 0),
  );
  const steps = [
    ...(changes.length === 0 ? [] : diff.steps),
    ...referenceSteps(checks, clear),
    ...constraintSteps(ruleChecks),
  ];
  if (
    diagnostics.length > 0 ||
    (changes.length === 0 && checks.length === 0 && ruleChecks.length === 0)
  ) {
    return { files: [], renames, steps: changes.length === 0 ? [] : steps, diagnostics };
  }
  const bodies = new Map(
    DIALECTS.map((dialect) => [
      dialect,
      [body(dialect, changes), referenceSql(dialect, checks, clear), constraintSql(ruleChecks)]
        .filter((text) => text !== '')
        .join('\n'),
    ]),
  );
  const hash = sha256(DIALECTS.map((dialect) => bodies.get(dialect)!).join('\n')).slice(0, 8);
  const name =
    changes.length > 0
      ? slug(changes)
      : checks.length > 0
        ? `check-references-${checks[0]!.source.entity.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
        : `check-constraints-${ruleChecks[0]!.entity.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  const id = `${String(nextSequence(options.existingMigrations)).padStart(4, '0')}_${name}_${hash}`;
  const files = DIALECTS.map((dialect) => ({
    path: `${MIGRATIONS_DIR}/${id}.${dialect}.sql`,
    contents: header(id, dialect, previous.hash, model, steps) + bodies.get(dialect)!,
  }));
  return { files, renames, steps, diagnostics: [] };
}

/** The entity renames, then the field renames, of a diff. */
function renamesOf(diffs: readonly EntityDiff[]): SchemaRename[] {
  const entities: SchemaRename[] = [];
  const fields: SchemaRename[] = [];
  for (const diff of diffs) {
    if (diff.kind !== 'alter') continue;
    const names = { old: namesOf(diff.old), new: namesOf(diff.new) };
    if (diff.old.name !== diff.new.name) entities.push({ kind: 'entity', ...names });
    for (const kept of diff.kept) {
      if (kept.old.name === kept.new.name) continue;
      fields.push({ kind: 'field', ...names, field: { old: kept.old.name, new: kept.new.name } });
    }
  }
  return [...entities, ...fields];
}

function namesOf(entity: EntityModel): EntityNames {
  const { name, typeName, camelName, fileName } = entity;
  return { name, typeName, camelName, fileName };
}

/**
 * The previous model, re-loaded and re-normalized exactly like a schema file. `file` names the
 * manifest it was read from in diagnostics.
 */
export function loadPreviousSchema(
  documents: readonly JsonValue[],
  file: string = DEFAULT_PREVIOUS_FILE,
): PreviousSchema {
  if (documents.length === 0) return { entities: [], hash: '' };
  // One line of JSON: positions in it would say nothing, so the quick parse serves, and takes
  // the documents as they are (as one list, the form of a JSON schema file).
  const loaded = loadSchemas(
    [{ file, text: JSON.stringify(documents), documents: [documents] }],
    'none',
  );
  const normalized = loaded.diagnostics.length > 0 ? undefined : normalize(loaded.entities);
  const problems =
    loaded.diagnostics.length > 0 ? loaded.diagnostics : (normalized?.diagnostics ?? []);
  if (normalized?.model !== undefined) {
    return { entities: normalized.model.entities, hash: normalized.model.shortHash };
  }
  return {
    diagnostics: [
      {
        file,
        line: 1,
        column: 1,
        code: 'MIGRATION_PREVIOUS_SCHEMA_INVALID',
        message:
          `The schema recorded by the previous generation does not load any more, so no migration ` +
          `can be planned from it: ${problems
            .slice(0, 3)
            .map((problem) => `${problem.message} (${problem.code})`)
            .join('; ')}`,
      },
    ],
  };
}

/** 1 + the highest sequence number among the existing files (`0007_…` → 8); 1 for none. */
export function nextSequence(existing: readonly string[]): number {
  let highest = 0;
  for (const path of existing) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    const match = /^(\d+)_/.exec(name);
    if (match !== null) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

/** A short name of the change for the file name: its first step, and how many more follow. */
function slug(changes: readonly EntityDiff[]): string {
  const first = changes[0]!;
  let words: string[];
  switch (first.kind) {
    case 'create':
      words = ['create', first.new.name];
      break;
    case 'drop':
      words = ['remove', first.old.name];
      break;
    case 'alter':
      words = alterWords(first);
      break;
  }
  const text = words
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const more = changes.length > 1 ? `-and-${changes.length - 1}-more` : '';
  return `${text === '' ? 'change' : text}${more}`;
}

function alterWords(diff: Extract<EntityDiff, { kind: 'alter' }>): string[] {
  const entity = diff.new.name;
  if (diff.rekey) return ['rekey', entity];
  if (diff.old.name !== diff.new.name) return ['rename', diff.old.name, 'to', entity];
  const renamed = diff.kept.find((field) => field.old.name !== field.new.name);
  if (renamed !== undefined) return ['rename', entity, renamed.old.name, 'to', renamed.new.name];
  const dropped = diff.dropped[0];
  if (dropped !== undefined) return ['remove', entity, dropped.name];
  const added = diff.added[0];
  if (added !== undefined) return ['add', entity, added.name];
  const changed = diff.kept.find(
    (field) => field.conversion !== undefined && field.conversion.change.op !== 'identity',
  );
  if (changed !== undefined) return ['convert', entity, changed.new.name];
  const required = diff.kept.find((field) => field.old.required !== field.new.required);
  if (required !== undefined) {
    return [required.new.required ? 'require' : 'relax', entity, required.new.name];
  }
  const indexed = diff.kept.find(
    (field) =>
      field.old.indexed !== field.new.indexed || field.old.ciIndexed !== field.new.ciIndexed,
  );
  if (indexed !== undefined) return ['index', entity, indexed.new.name];
  return indexesChanged(diff) ? ['indexes', entity] : ['change', entity];
}

function body(dialect: Dialect, changes: readonly EntityDiff[]): string {
  const render = dialect === 'sqlite' ? sqliteStatements : postgresStatements;
  return changes
    .flatMap((diff) => render(diff))
    .map((statement) => `${statement};\n`)
    .join('\n');
}

const DIALECT_NAMES: Readonly<Record<Dialect, string>> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
};

function header(
  id: string,
  dialect: Dialect,
  previousHash: string,
  model: SchemaModel,
  steps: readonly MigrationStep[],
): string {
  const lines = [
    headerLine(model.shortHash, model.sourceFiles),
    `Migration ${id} for ${DIALECT_NAMES[dialect]}: schema ${previousHash === '' ? '(none)' : previousHash} to ${model.shortHash}.`,
    'The service runs it at start-up, in one transaction with any other pending migration, and',
    'records it in _eg_migrations. Never edit or delete it once it ran anywhere (docs/migrations.md).',
    '',
    'Steps:',
    ...steps.map(
      (step, index) =>
        `  ${index + 1}. ${step.destructive ? 'DESTRUCTIVE: ' : ''}${step.description}`,
    ),
  ];
  return `${lines.map((line) => (line === '' ? '--' : `-- ${line}`)).join('\n')}\n\n`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The plan as a reviewer reads it: destructive steps first under a warning, then the others.
 *
 * @example console.log(describeSteps(plan.steps))
 */
export function describeSteps(steps: readonly MigrationStep[]): string {
  const destructive = steps.filter((step) => step.destructive);
  const safe = steps.filter((step) => !step.destructive);
  const lines: string[] = [];
  if (destructive.length > 0) {
    lines.push(`!! ${destructive.length} DESTRUCTIVE step(s), stored data will be lost:`);
    for (const step of destructive) lines.push(`  !! ${step.description}`);
  }
  if (safe.length > 0) {
    lines.push(`${safe.length} step(s) keeping all data:`);
    for (const step of safe) lines.push(`  - ${step.description}`);
  }
  return lines.join('\n');
}
