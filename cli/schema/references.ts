/**
 * Checks across all loaded files: entity names unique (case-insensitively, as URLs match them)
 * and every ENTITY_REF naming a loaded entity.
 */
import type { EntityDoc, FieldDoc, TypeConfigDoc } from './types.js';
import type { EntityRefUse } from './validate-field.js';
import type { Reporter } from './report.js';
import { suggestionSuffix } from './suggest.js';
import type { ValidatedDocument } from './validate.js';
import { capitalize } from './values.js';

/** A validated document and the file it came from. */
export interface DocumentInFile {
  readonly reporter: Reporter;
  readonly validated: ValidatedDocument;
}

/**
 * Reports DUPLICATE_ENTITY at every repeated name (the first in input order wins) and returns the
 * declared names keyed by their upper-case form.
 */
export function checkEntityNames(documents: readonly DocumentInFile[]): Map<string, string> {
  const first = new Map<string, { name: string; where: string }>();
  for (const { reporter, validated } of documents) {
    const name = validated.name;
    if (name === undefined) continue;
    const key = name.value.toUpperCase();
    const earlier = first.get(key);
    if (earlier === undefined) {
      first.set(key, {
        name: name.value,
        where: `${reporter.file}:${name.position.line}:${name.position.column}`,
      });
      continue;
    }
    const message =
      `Entity '${name.value}' is already defined as '${earlier.name}' at ${earlier.where} ` +
      `(entity names are compared case-insensitively)`;
    reporter.report(name.position, 'DUPLICATE_ENTITY', message);
  }
  return new Map([...first].map(([key, { name }]) => [key, name]));
}

/** Reports UNKNOWN_ENTITY_REF for references to no loaded entity; matching ignores case. */
export function checkEntityRefs(
  documents: readonly DocumentInFile[],
  names: ReadonlyMap<string, string>,
): void {
  const declared = [...names.values()];
  const entities = new Map<string, EntityDoc>();
  for (const { validated } of documents) {
    const entity = validated.entity;
    if (entity !== undefined && !entities.has(entity.name.toUpperCase())) {
      entities.set(entity.name.toUpperCase(), entity);
    }
  }
  for (const { reporter, validated } of documents) {
    for (const ref of validated.refs) {
      if (names.has(ref.entity.toUpperCase())) {
        checkOnDelete(ref, validated.entity, entities.get(ref.entity.toUpperCase()), reporter);
        continue;
      }
      const message =
        `${capitalize(ref.owner)} refers to unknown entity '${ref.entity}'` +
        suggestionSuffix(ref.entity, declared, '; no loaded schema file defines it');
      reporter.report(ref.position, 'UNKNOWN_ENTITY_REF', message);
    }
  }
}

/** A top-level field (`category`) or the elements of a top-level array (`tags[]`). */
const CHECKED_REFERENCE_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\[\])?$/;

/**
 * Reports INVALID_ON_DELETE where an `onDelete` rule cannot hold: integrity is kept for top-level
 * references and arrays of them (the storage finds the referencing records by column), a
 * single-record entity's record is never deleted, and EMPTY cannot clear a required or key field.
 * Cycles and self references are fine: the cascade visits each record once.
 */
function checkOnDelete(
  ref: EntityRefUse,
  owner: EntityDoc | undefined,
  target: EntityDoc | undefined,
  reporter: Reporter,
): void {
  const onDelete = ref.onDelete;
  if (onDelete === undefined) return;
  const where = `'onDelete' of ${ref.owner}`;
  if (!CHECKED_REFERENCE_PATH.test(ref.path)) {
    const message =
      `${capitalize(where)} is on a nested reference; integrity is kept for top-level ` +
      `ENTITY_REF fields and ARRAY fields of ENTITY_REF only`;
    reporter.report(onDelete.position, 'INVALID_ON_DELETE', message);
    return;
  }
  if (target?.singleRecord === true) {
    const message =
      `${capitalize(where)} has no effect: ${target.name} is a single-record entity, whose ` +
      `record is never deleted; remove it`;
    reporter.report(onDelete.position, 'INVALID_ON_DELETE', message);
    return;
  }
  if (onDelete.rule !== 'EMPTY' || ref.path.endsWith('[]') || owner === undefined) return;
  const field = owner.fields.find((candidate) => candidate.name === ref.path);
  const key = owner.lk.includes(ref.path);
  if (field?.required === true || key) {
    const message =
      `${capitalize(where)} is EMPTY, but the field is ${key ? 'part of the key' : 'required'} ` +
      `and cannot be cleared; use RESTRICT or DELETE`;
    reporter.report(onDelete.position, 'INVALID_ON_DELETE', message);
  }
}

/**
 * Rewrites every `entityRef.entity` to the referenced entity's declared spelling, so later stages
 * can compare names exactly. Call only after checkEntityRefs found nothing.
 */
export function resolveEntityRefs(
  entity: EntityDoc,
  names: ReadonlyMap<string, string>,
): EntityDoc {
  return { ...entity, fields: entity.fields.map((field) => resolveField(field, names)) };
}

function resolveField(field: FieldDoc, names: ReadonlyMap<string, string>): FieldDoc {
  return { ...field, ...resolveConfig(field, names) };
}

function resolveConfig(config: TypeConfigDoc, names: ReadonlyMap<string, string>): TypeConfigDoc {
  const resolved: { -readonly [K in keyof TypeConfigDoc]: TypeConfigDoc[K] } = { ...config };
  if (config.entityRef !== undefined) {
    resolved.entityRef = {
      ...config.entityRef,
      entity: names.get(config.entityRef.entity.toUpperCase()) ?? config.entityRef.entity,
    };
  }
  if (config.object !== undefined) {
    resolved.object = { fields: config.object.fields.map((inner) => resolveField(inner, names)) };
  }
  if (config.dict !== undefined) {
    resolved.dict = { fields: config.dict.fields.map((inner) => resolveField(inner, names)) };
  }
  if (config.array !== undefined) resolved.array = resolveConfig(config.array, names);
  return resolved;
}
