/**
 * The structure of an ENTITY document — its keys, the JSON types of their values, which type needs
 * which configuration key — is schemas/entity-schema.json, checked by ajv (json-schema.ts). This
 * module words ajv's errors as the schema diagnostics users know: each names what holds the
 * problem (`field 'price' of entity PRODUCT`), with a did-you-mean for unknown keys and types.
 * The rules between values (names, keys, references, defaults…) are validate.ts's and
 * validate-field.ts's, which skip what has the wrong shape.
 */
import { FIELD_TYPES, type FieldType } from './types.js';
import { allowedKeys, structureProblems, type StructureProblem } from './json-schema.js';
import type { MapNode, SchemaNode } from './node.js';
import type { Reporter } from './report.js';
import { didYouMean, suggestionSuffix } from './suggest.js';
import { capitalize, describeNode, entryOf } from './values.js';

/** The keys that carry one type's own configuration, and the type each belongs to. */
export const TYPE_CONFIG_KEYS = {
  enums: 'ENUM',
  select: 'SELECT',
  object: 'OBJECT',
  array: 'ARRAY',
  dict: 'DICTIONARY',
  entityRef: 'ENTITY_REF',
  any: 'ANY',
  geoHashLocation: 'GEOHASH_LOCATION',
} as const satisfies Record<string, FieldType>;

type TypeConfigKey = keyof typeof TYPE_CONFIG_KEYS;

/** What to write for a missing configuration key. */
const CONFIG_EXAMPLES: Readonly<Record<TypeConfigKey, string>> = {
  enums: 'list the allowed values, e.g. enums: [A, B]',
  select: 'list the options, e.g. select: {elems: [{value: A}, {value: B}]}',
  object: 'declare its fields, e.g. object: {fields: [{name: x, type: STRING}]}',
  array: 'give the element type, e.g. array: {type: STRING}',
  dict: 'declare its fields, e.g. dict: {fields: [{name: x, type: STRING}]}',
  entityRef: 'name the target, e.g. entityRef: {entity: CATEGORY}',
  any: "name the sibling field that holds the value's type",
  geoHashLocation: '',
};

/** Field keys that make no sense on an array element; they get a specific message. */
const FIELD_ONLY_KEYS: readonly string[] = [
  'name',
  'required',
  'displayName',
  'description',
  'index',
  'unique',
  'generated',
  'default',
  'renamedFrom',
];

/** Names other tools and languages use for our types, for suggestions an edit distance misses. */
const TYPE_ALIASES: ReadonlyMap<string, FieldType> = new Map<string, FieldType>([
  ['BOOLEAN', 'BOOL'],
  ['INT', 'INTEGER'],
  ['LONG', 'INTEGER'],
  ['NUMBER', 'DOUBLE'],
  ['FLOAT', 'DOUBLE'],
  ['TEXT', 'STRING'],
  ['TIMESTAMP', 'DATE_TIME'],
  ['MAP', 'DICTIONARY'],
  ['LIST', 'ARRAY'],
  ['REF', 'ENTITY_REF'],
  ['IMAGE', 'B64_IMAGE'],
  ['GEOHASH', 'GEOHASH_LOCATION'],
]);

/** The type a field or element declares, when it is a known type. */
export function knownType(map: MapNode): FieldType | undefined {
  const node = entryOf(map, 'type')?.value;
  const written = node?.kind === 'scalar' ? node.value : undefined;
  return FIELD_TYPES.find((type) => type === written);
}

/** What holds a mapping of the document, for messages. */
interface Place {
  readonly kind: 'document' | 'entity' | 'field' | 'element' | 'config' | 'option' | 'other';
  /** `field 'price' of entity PRODUCT`, `'select' of field 'kind' of entity PRODUCT`… */
  readonly label: string;
  /** For a field: `field #3 of entity PRODUCT`, the label a field without a usable name has. */
  readonly unnamed?: string;
  /** For fields and elements: `price`, `tags[]`, the prefix of inner paths. */
  readonly path?: string;
  /** For fields and elements: the known type. */
  readonly type?: FieldType;
  /** For configuration mappings: their key. */
  readonly key?: string;
  /** False when nothing inside is looked at (another type's configuration, say). */
  readonly checked: boolean;
  readonly node: SchemaNode;
}

/**
 * Reports the structure problems of one ENTITY document. Problems inside a part that is not
 * looked at are left out, as they would only follow from it: the entity of a document of another
 * type, the configuration of a field whose type is unknown or another one.
 */
export function reportStructure(root: SchemaNode, reporter: Reporter): void {
  // Conditional requirements (`then`) after the plain ones, as the value rules read them: a
  // field's name, then its type, then its type's configuration.
  const problems = structureProblems(root, 'entityDocument').sort(
    (a, b) => conditional(a) - conditional(b),
  );
  for (const problem of problems) {
    const places = placesAlong(root, problem.path);
    if (places === undefined || !places.every((place) => place.checked)) continue;
    report(problem, places, reporter);
  }
}

function conditional(problem: StructureProblem): number {
  return problem.error.schemaPath.includes('/then/') ? 1 : 0;
}

/**
 * The place of every mapping along `path` (for the root and each segment; list indexes give the
 * place of the item); undefined for a path that leaves the document's known parts.
 */
function placesAlong(root: SchemaNode, path: readonly string[]): Place[] | undefined {
  const places: Place[] = [{ kind: 'document', label: 'the document', checked: true, node: root }];
  let node = root;
  let entityLabel = 'the entity';
  const documentType = root.kind === 'map' ? entryOf(root, 'type')?.value : undefined;
  const otherDocument =
    documentType !== undefined &&
    !(documentType.kind === 'scalar' && documentType.value === 'ENTITY');
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    const parent = places[places.length - 1]!;
    const next = childNode(node, segment);
    if (next === undefined) return undefined;
    node = next;
    let place: Place = { kind: 'other', label: parent.label, checked: true, node };
    if (parent.kind === 'document' && segment === 'entity') {
      const name = node.kind === 'map' ? entryOf(node, 'name')?.value : undefined;
      if (name?.kind === 'scalar' && typeof name.value === 'string') {
        entityLabel = `entity ${name.value}`;
      }
      place = { kind: 'entity', label: entityLabel, checked: !otherDocument, node };
    } else if (parent.kind === 'entity' && segment === 'tree') {
      place = {
        kind: 'config',
        key: 'tree',
        label: `'tree' of ${entityLabel}`,
        checked: true,
        node,
      };
    } else if (places[places.length - 2]?.kind === 'entity' && path[index - 1] === 'indexes') {
      // An entry of `indexes` in its mapping form: {fields, unique}.
      const label = `index #${Number(segment) + 1} of ${entityLabel}`;
      place = { kind: 'config', key: 'index', label, checked: true, node };
    } else if (parent.kind === 'config' && parent.key === 'index') {
      place = { kind: 'other', label: parent.label, checked: true, node };
    } else if (path[index - 1] === 'fields' && /^\d+$/.test(segment)) {
      const owner = places[places.length - 2]!;
      place = fieldPlace(node, Number(segment), owner, entityLabel);
    } else if (parent.kind === 'field' || parent.kind === 'element') {
      place = configPlace(node, segment, parent, entityLabel);
    } else if (parent.kind === 'config' && parent.key === 'select' && segment === 'elems') {
      place = { kind: 'other', label: parent.label, checked: true, node };
    } else if (path[index - 1] === 'elems' && /^\d+$/.test(segment)) {
      const select = places[places.length - 2]!;
      const label = `option #${Number(segment) + 1} of ${select.label}`;
      place = { kind: 'option', label, checked: true, node };
    }
    places.push(place);
  }
  return places;
}

function childNode(node: SchemaNode, segment: string): SchemaNode | undefined {
  if (node.kind === 'map') return entryOf(node, segment)?.value;
  if (node.kind === 'seq') return node.items[Number(segment)];
  return undefined;
}

/** A field, item `index` of the `fields` list of `owner` (the entity or an object/dict). */
function fieldPlace(node: SchemaNode, index: number, owner: Place, entityLabel: string): Place {
  const ownerLabel = owner.kind === 'entity' ? entityLabel : owner.label;
  const unnamed = `field #${index + 1} of ${ownerLabel}`;
  const prefix =
    owner.kind === 'config' && owner.path !== undefined
      ? `${owner.path}${owner.key === 'dict' ? '.*.' : '.'}`
      : '';
  const nameNode = node.kind === 'map' ? entryOf(node, 'name')?.value : undefined;
  const name =
    nameNode?.kind === 'scalar' && typeof nameNode.value === 'string' ? nameNode.value : undefined;
  const type = node.kind === 'map' ? knownType(node) : undefined;
  return {
    kind: 'field',
    label: name === undefined ? unnamed : `field '${prefix}${name}' of ${entityLabel}`,
    unnamed,
    path: name === undefined ? `${prefix}#${index + 1}` : `${prefix}${name}`,
    ...(type === undefined ? {} : { type }),
    checked: true,
    node,
  };
}

/** A configuration key of a field or element: checked only when it is the type's own. */
function configPlace(node: SchemaNode, key: string, owner: Place, entityLabel: string): Place {
  const belongsTo = (TYPE_CONFIG_KEYS as Record<string, FieldType | undefined>)[key];
  const checked = belongsTo === undefined || belongsTo === owner.type;
  if (key === 'array') {
    const path = `${owner.path ?? ''}[]`;
    const type = node.kind === 'map' ? knownType(node) : undefined;
    return {
      kind: 'element',
      label: `array element '${path}' of ${entityLabel}`,
      path,
      ...(type === undefined ? {} : { type }),
      checked,
      node,
    };
  }
  return {
    kind: 'config',
    key,
    label: `'${key}' of ${owner.label}`,
    ...(owner.path === undefined ? {} : { path: owner.path }),
    checked,
    node,
  };
}

function report(problem: StructureProblem, places: readonly Place[], reporter: Reporter): void {
  const { error, path, node, entry, unknownKey } = problem;
  const place = places[places.length - 1]!;
  const parent = places[places.length - 2];
  const key = path[path.length - 1];
  switch (error.keyword) {
    case 'additionalProperties': {
      if (unknownKey === undefined) return;
      const allowed = allowedKeys(error);
      const message =
        place.kind === 'element' && FIELD_ONLY_KEYS.includes(unknownKey.key)
          ? `Unknown key '${unknownKey.key}' in ${place.label}: an array element configuration holds only 'type' and that type's configuration`
          : `Unknown key '${unknownKey.key}' in ${place.label}` +
            suggestionSuffix(unknownKey.key, allowed, `; allowed keys are ${allowed.join(', ')}`);
      reporter.report(unknownKey.keyPosition, 'UNKNOWN_KEY', message);
      return;
    }
    case 'required':
      reportMissing(
        (error.params as { missingProperty: string }).missingProperty,
        node,
        place,
        reporter,
      );
      return;
    case 'type':
      reportType((error.params as { type: string }).type, path, node, places, reporter);
      return;
    case 'const':
      if (key === 'type' && parent?.kind === 'document') {
        const written =
          node.kind === 'scalar' && typeof node.value === 'string' ? node.value : undefined;
        const hint =
          written === undefined
            ? ''
            : suggestionSuffix(written, ['ENTITY'], '; only ENTITY documents are supported');
        reporter.report(
          node.position,
          'NOT_AN_ENTITY',
          `Document type must be ENTITY, not ${describeNode(node)}${hint}`,
        );
      } else if (key === 'type' && parent?.type !== undefined) {
        reportMisplacedConfig(error.schema, parent, reporter);
      }
      return;
    case 'enum':
      if (key === 'type' && node.kind === 'scalar' && typeof node.value === 'string') {
        const written = node.value;
        const suggestion =
          didYouMean(written, FIELD_TYPES) ?? TYPE_ALIASES.get(written.toUpperCase());
        const hint =
          suggestion === undefined
            ? `; known types are ${FIELD_TYPES.join(', ')}`
            : `; did you mean '${suggestion}'?`;
        reporter.report(
          node.position,
          'UNKNOWN_TYPE',
          `Unknown type '${written}' for ${parent?.label ?? place.label}${hint}`,
        );
      }
      return;
    case 'minItems':
      if (key === 'fields' && entry !== undefined && parent?.key !== 'index') {
        const owner = parent?.kind === 'entity' ? parent.label : place.label;
        reporter.report(
          node.position,
          'EMPTY_FIELDS',
          `${capitalize(owner)} has no fields; declare at least one`,
        );
      }
      return;
    default:
      // Patterns, empty texts and lists: worded by the value rules (validate*.ts), which also
      // know what else is wrong with such a value.
      return;
  }
}

/** `'enums' applies only to type ENUM, but field 'price' of entity PRODUCT has type DOUBLE`. */
function reportMisplacedConfig(schema: unknown, owner: Place, reporter: Reporter): void {
  const configType = typeof schema === 'string' ? schema : undefined;
  const key = Object.entries(TYPE_CONFIG_KEYS).find(([, type]) => type === configType)?.[0];
  const config =
    key === undefined || owner.node.kind !== 'map' ? undefined : entryOf(owner.node, key);
  if (config === undefined || owner.type === undefined) return;
  const message = `'${config.key}' applies only to type ${configType}, but ${owner.label} has type ${owner.type}`;
  reporter.report(config.keyPosition, 'INVALID_VALUE', message);
}

function reportMissing(key: string, map: SchemaNode, place: Place, reporter: Reporter): void {
  const at = map.position;
  const label = capitalize(place.label);
  let code: 'MISSING_KEY' | 'MISSING_TYPE_CONFIG' = 'MISSING_KEY';
  let message: string;
  if (place.kind === 'document') {
    message =
      key === 'type'
        ? "Document has no 'type'; ENTITY documents start with type: ENTITY"
        : "Document has no 'entity'; an ENTITY document holds type: ENTITY and entity: {name, lk, fields}";
  } else if (place.kind === 'entity') {
    message =
      key === 'name'
        ? "The entity has no 'name'"
        : key === 'lk'
          ? `${label} has no 'lk'; name its logical key field(s), e.g. lk: [id]`
          : `${label} has no '${key}'`;
  } else if (place.kind === 'field' && key === 'name') {
    message = `${capitalize(place.unnamed ?? place.label)} has no 'name'`;
  } else if ((place.kind === 'field' || place.kind === 'element') && key in TYPE_CONFIG_KEYS) {
    const configKey = key as TypeConfigKey;
    code = 'MISSING_TYPE_CONFIG';
    message = `${label} has type ${TYPE_CONFIG_KEYS[configKey]} but no '${key}'; ${CONFIG_EXAMPLES[configKey]}`;
  } else if (place.kind === 'config' && place.key === 'index') {
    message = `${label} has no '${key}'; name its fields in order, e.g. {fields: [category, name], unique: true}`;
  } else if (place.kind === 'config' && (key === 'elems' || key === 'fields')) {
    code = 'MISSING_TYPE_CONFIG';
    const configKey = (place.key ?? 'select') as TypeConfigKey;
    message = `${label} has no '${key}'; ${CONFIG_EXAMPLES[configKey]}`;
  } else if (place.kind === 'config' && (key === 'entity' || key === 'typeField')) {
    const hint = key === 'entity' ? 'name the referenced entity' : CONFIG_EXAMPLES.any;
    message = `${label} has no '${key}'; ${hint}`;
  } else {
    message = `${label} has no '${key}'`;
  }
  reporter.report(at, code, message);
}

/** What a value of each JSON Schema type is called in messages. */
const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  boolean: 'true or false',
  object: 'a mapping',
  array: 'a list',
};

function reportType(
  type: string,
  path: readonly string[],
  node: SchemaNode,
  places: readonly Place[],
  reporter: Reporter,
): void {
  const key = path[path.length - 1];
  const at = node.position;
  if (key === undefined) {
    const message = `Expected an ENTITY document (a mapping with 'type: ENTITY' and 'entity'), not ${describeNode(node)}`;
    reporter.report(at, 'NOT_AN_ENTITY', message);
    return;
  }
  if (!/^\d+$/.test(key)) {
    const owner = places[places.length - 2]!;
    const message = `'${key}' of ${owner.label} must be ${TYPE_WORDS[type] ?? type}, not ${describeWrong(node)}`;
    reporter.report(at, 'INVALID_VALUE', message);
    return;
  }
  // An item of the list under `listKey`, which `owner` holds.
  const number = Number(key) + 1;
  const listKey = path[path.length - 2];
  const owner = places[places.length - 3]!;
  let message: string;
  if (listKey === 'fields' && path[path.length - 4] === 'indexes') {
    message = `Each field of ${owner.label} must be a field name, not ${describeNode(node)}`;
  } else if (listKey === 'fields') {
    message = `Field #${number} of ${owner.label} must be a mapping with name and type, not ${describeNode(node)}`;
  } else if (listKey === 'elems') {
    message = `Option #${number} of ${owner.label} must be a mapping with a 'value', not ${describeNode(node)}`;
  } else if (listKey === 'indexes') {
    message =
      `Each entry of 'indexes' of ${owner.label} must be a list of field names ` +
      `(e.g. [category, -price]) or a mapping (e.g. {fields: [category, name], unique: true}), ` +
      `not ${describeNode(node)}`;
  } else if (path[path.length - 3] === 'indexes') {
    const entity = places[places.length - 4]!;
    message = `Each field of an index of ${entity.label} must be a field name (-name for descending), not ${describeNode(node)}`;
  } else {
    message = `Each entry of '${listKey}' of ${owner.label} must be ${TYPE_WORDS[type] ?? type}, not ${describeWrong(node)}`;
  }
  reporter.report(at, 'INVALID_VALUE', message);
}

/** `describeNode`, plus advice for `null` (YAML's `key:` with nothing after it). */
function describeWrong(node: SchemaNode): string {
  const isNull = node.kind === 'scalar' && node.value === null;
  return isNull ? 'null (leave the key out instead)' : describeNode(node);
}
