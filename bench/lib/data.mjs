// Deterministic test data: PRODUCT records of the shop fixture and synthetic schemas of N entities
// (with record generators for them). Everything is seeded, so every run sees the same data.

/** mulberry32: a small, fast, seeded PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const CATEGORY_COUNT = 50;
const STATUSES = ['DRAFT', 'ACTIVE', 'RETIRED'];
const SIZES = ['S', 'M', 'L'];
const WORDS = [
  'alpha',
  'bravo',
  'cedar',
  'delta',
  'ember',
  'fjord',
  'gamma',
  'harbor',
  'iris',
  'jade',
];
const COLORS = ['red', 'green', 'blue', 'black', 'white'];

/** The key of the n-th seeded product. */
export function productCode(n) {
  return `P${String(n).padStart(7, '0')}`;
}

export function categoryName(n) {
  return `cat-${String(n % CATEGORY_COUNT).padStart(3, '0')}`;
}

/**
 * The CATEGORY records the products name (`categoryName`): the shop's PRODUCT.category has
 * `onDelete: RESTRICT`, so they are inserted before any product.
 */
export function categoryRecords() {
  return Array.from({ length: CATEGORY_COUNT }, (_, n) => ({
    name: categoryName(n),
    description: `Category ${n}`,
  }));
}

/** A canonical DECIMAL text (what the generated converter would return). */
function decimalText(cents) {
  return String(cents / 100);
}

function pad2(n) {
  return String(n).padStart(2, '0');
}

/**
 * A PRODUCT record in canonical form (the values the generated converters return unchanged), with
 * its fields in declared order, so every server stores and echoes exactly the same JSON.
 * `code` is the key; `n` drives the content deterministically.
 */
export function productRecord(code, n) {
  const random = prng(n * 2654435761);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const record = {
    code,
    // Unique within its category (the shop's unique [category, name]): the key is part of it.
    name: `Product ${code} ${pick(WORDS)} ${pick(WORDS)}`,
    category: categoryName(n),
    price: decimalText(100 + Math.floor(random() * 99_900)),
    stock: Math.floor(random() * 1000),
    weightKg: (1 + Math.floor(random() * 10_000)) / 1000,
    available: random() < 0.7,
    releaseDate: `20${10 + Math.floor(random() * 15)}-${pad2(1 + Math.floor(random() * 12))}-${pad2(1 + Math.floor(random() * 28))}`,
    lastRestock: new Date(1_700_000_000_000 + Math.floor(random() * 50_000_000_000)).toISOString(),
    status: pick(STATUSES),
    size: pick(SIZES),
    dimensions: {
      width: 1 + Math.floor(random() * 100),
      height: 1 + Math.floor(random() * 100),
      unit: 'cm',
    },
    tags: [pick(WORDS), pick(WORDS)],
    ratings: [
      1 + Math.floor(random() * 5),
      1 + Math.floor(random() * 5),
      1 + Math.floor(random() * 5),
    ],
  };
  if (random() < 0.5) {
    record.variants = [
      {
        sku: `${code}-a`,
        color: pick(COLORS),
        extraPrice: decimalText(Math.floor(random() * 1000)),
      },
      { sku: `${code}-b`, color: pick(COLORS) },
    ];
  }
  if (random() < 0.5) {
    record.prices = {
      EUR: { amount: record.price },
      USD: { amount: decimalText(200 + Math.floor(random() * 99_900)) },
    };
  }
  return record;
}

// --- Synthetic schemas ---------------------------------------------------------------------------

/** Every field type but STRING (the key and `name` are STRING): 15 types, rotated per entity. */
const ROTATING_TYPES = [
  'INTEGER',
  'DOUBLE',
  'DECIMAL',
  'BOOL',
  'DATE',
  'DATE_TIME',
  'ENUM',
  'SELECT',
  'OBJECT',
  'ARRAY',
  'DICTIONARY',
  'B64_IMAGE',
  'ANY',
  'ENTITY_REF',
  'GEOHASH_LOCATION',
];
/** Fields per synthetic entity: the key, an indexed name, and 10 of the rotating types. */
export const SYNTHETIC_FIELDS_PER_ENTITY = 12;

export function syntheticEntityName(index) {
  return `E${String(index).padStart(4, '0')}`;
}

/** The rotating field types of synthetic entity `index` (entities 0, 3, 6, … share a shape). */
function typesOf(index) {
  const offset = (index * 10) % ROTATING_TYPES.length;
  return Array.from(
    { length: SYNTHETIC_FIELDS_PER_ENTITY - 2 },
    (_, i) => ROTATING_TYPES[(offset + i) % ROTATING_TYPES.length],
  );
}

function fieldYaml(type, index, indent) {
  const pad = ' '.repeat(indent);
  const name = `f${type.toLowerCase().replace(/_/g, '')}`;
  const lines = [`${pad}- name: ${name}`, `${pad}  type: ${type}`];
  switch (type) {
    case 'ENUM':
      lines.push(`${pad}  enums: [LOW, MEDIUM, HIGH]`);
      break;
    case 'SELECT':
      lines.push(
        `${pad}  select:`,
        `${pad}    elems:`,
        `${pad}      - value: A`,
        `${pad}        displayName: Option A`,
        `${pad}      - value: B`,
      );
      break;
    case 'OBJECT':
      lines.push(
        `${pad}  object:`,
        `${pad}    fields:`,
        `${pad}      - name: label`,
        `${pad}        type: STRING`,
        `${pad}        required: true`,
        `${pad}      - name: amount`,
        `${pad}        type: DECIMAL`,
        `${pad}      - name: when`,
        `${pad}        type: DATE`,
      );
      break;
    case 'ARRAY':
      lines.push(`${pad}  array:`, `${pad}    type: STRING`);
      break;
    case 'DICTIONARY':
      lines.push(
        `${pad}  dict:`,
        `${pad}    fields:`,
        `${pad}      - name: value`,
        `${pad}        type: DOUBLE`,
        `${pad}        required: true`,
      );
      break;
    case 'ENTITY_REF':
      lines.push(`${pad}  entityRef:`, `${pad}    entity: ${syntheticEntityName(0)}`);
      break;
    default:
      break;
  }
  if (type === 'DECIMAL' || type === 'DATE') lines.push(`${pad}  index: true`);
  if (index % 4 === 0) lines.push(`${pad}  description: Synthetic ${type} field number ${index}.`);
  return lines;
}

/** A YAML file of `count` ENTITY documents, about 12 fields each, covering every field type. */
export function syntheticSchemaYaml(count) {
  const documents = [];
  for (let e = 0; e < count; e++) {
    const lines = [
      `type: ENTITY`,
      `entity:`,
      `  name: ${syntheticEntityName(e)}`,
      `  displayName: Synthetic entity ${e}`,
      `  description: Generated for the entity-gen benchmarks.`,
      `  lk: [id]`,
      `  fields:`,
      `    - name: id`,
      `      type: STRING`,
      `      required: true`,
      `    - name: name`,
      `      type: STRING`,
      `      required: true`,
      `      index: true`,
    ];
    for (const [i, type] of typesOf(e).entries()) lines.push(...fieldYaml(type, i, 4));
    documents.push(lines.join('\n'));
  }
  return `# Synthetic schema of ${count} entities (bench/lib/data.mjs); do not edit.\n${documents.join('\n---\n')}\n`;
}

const B64_PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** A valid record of synthetic entity `entityIndex`, in canonical form. */
export function syntheticRecord(entityIndex, n) {
  const random = prng((entityIndex + 1) * 7919 + n * 104729);
  const record = {
    id: `r${String(n).padStart(7, '0')}`,
    name: `Record ${n} of ${syntheticEntityName(entityIndex)}`,
  };
  for (const type of typesOf(entityIndex)) {
    const name = `f${type.toLowerCase().replace(/_/g, '')}`;
    switch (type) {
      case 'INTEGER':
        record[name] = Math.floor(random() * 100_000);
        break;
      case 'DOUBLE':
        record[name] = Math.round(random() * 1e6) / 1000 + 0.5;
        break;
      case 'DECIMAL':
        record[name] = String(Math.floor(random() * 1e6) / 100);
        break;
      case 'BOOL':
        record[name] = random() < 0.5;
        break;
      case 'DATE':
        record[name] =
          `2024-${pad2(1 + Math.floor(random() * 12))}-${pad2(1 + Math.floor(random() * 28))}`;
        break;
      case 'DATE_TIME':
        record[name] = new Date(1_700_000_000_000 + Math.floor(random() * 1e10)).toISOString();
        break;
      case 'ENUM':
        record[name] = ['LOW', 'MEDIUM', 'HIGH'][Math.floor(random() * 3)];
        break;
      case 'SELECT':
        record[name] = random() < 0.5 ? 'A' : 'B';
        break;
      case 'OBJECT':
        record[name] = { label: `label ${n}`, amount: '12.5', when: '2024-05-06' };
        break;
      case 'ARRAY':
        record[name] = ['x', 'y', String(n % 17)];
        break;
      case 'DICTIONARY':
        record[name] = { a: { value: 1.5 }, b: { value: 2.25 } };
        break;
      case 'B64_IMAGE':
        record[name] = B64_PIXEL;
        break;
      case 'ANY':
        record[name] = { anything: [1, 'two', null] };
        break;
      case 'ENTITY_REF':
        record[name] = 'r0000001';
        break;
      case 'GEOHASH_LOCATION':
        record[name] = { lat: 43.7, lng: 10.4 };
        break;
    }
  }
  return record;
}

// --- The five-field entity of the bulk benchmark ---------------------------------------------------

/** One ENTITY of five fields (key, indexed name, INTEGER, DOUBLE, BOOL): the small-record bulk case. */
export function fiveFieldSchemaYaml() {
  return [
    '# The five-field entity of the bulk benchmark (bench/lib/data.mjs); do not edit.',
    'type: ENTITY',
    'entity:',
    '  name: ITEM',
    '  lk: [id]',
    '  fields:',
    '    - name: id',
    '      type: STRING',
    '      required: true',
    '    - name: name',
    '      type: STRING',
    '      required: true',
    '      index: true',
    '    - name: qty',
    '      type: INTEGER',
    '    - name: price',
    '      type: DOUBLE',
    '    - name: active',
    '      type: BOOL',
    '',
  ].join('\n');
}

/** A valid ITEM record of the five-field schema, in canonical form. */
export function fiveFieldRecord(id, n) {
  const random = prng(n * 40503 + 17);
  return {
    id,
    name: `Item ${n} ${pick(random, WORDS)}`,
    qty: Math.floor(random() * 1000),
    price: Math.round(random() * 1e6) / 100 + 0.5,
    active: random() < 0.5,
  };
}

// --- The ITEM table of the Platformatic DB comparison ------------------------------------------------

/**
 * The five-field ITEM of the peer comparison (bench/baselines/platformatic/migrations holds the same
 * table for Platformatic DB): key, indexed name, INTEGER, DOUBLE, BOOL, and the composite index
 * [available, -price] that serves `available=true` pages sorted by descending price.
 */
export function peerSchemaYaml() {
  return [
    '# The ITEM of the Platformatic DB comparison (bench/lib/data.mjs); do not edit.',
    'type: ENTITY',
    'entity:',
    '  name: ITEM',
    '  lk: [id]',
    '  indexes:',
    '    - [available, -price]',
    '  fields:',
    '    - name: id',
    '      type: STRING',
    '      required: true',
    '    - name: name',
    '      type: STRING',
    '      required: true',
    '      index: true',
    '    - name: qty',
    '      type: INTEGER',
    '    - name: price',
    '      type: DOUBLE',
    '    - name: available',
    '      type: BOOL',
    '',
  ].join('\n');
}

/** A valid ITEM record of the peer comparison (the five-field record, `active` named `available`). */
export function peerRecord(id, n) {
  const { active, ...rest } = fiveFieldRecord(id, n);
  return { ...rest, available: active };
}

function pick(random, list) {
  return list[Math.floor(random() * list.length)];
}
