/**
 * The JSON Schemas shipped in schemas/ (for editors and for the structure checks): they accept
 * every valid fixture, refuse every invalid fixture that has a structural problem, and the files
 * that name them with `$schema` or the YAML modeline still load.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadAccess } from '../../cli/access/index.js';
import { formatDiagnostic } from '../../cli/diagnostics.js';
import { SCHEMA_MODELINE } from '../../cli/init.js';
import { normalize } from '../../cli/model/normalize.js';
import type { SchemaModel } from '../../cli/model/types.js';
import { loadRestConfig } from '../../cli/restconfig/index.js';
import { loadSchemas } from '../../cli/schema/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = path.join(ROOT, 'fixtures');
const KINDS = ['entity-schema', 'rest-config', 'access'] as const;
type Kind = (typeof KINDS)[number];

const ajv = new Ajv({ allErrors: true, strictRequired: false, strictTypes: false });
const validators = Object.fromEntries(
  KINDS.map((kind) => [
    kind,
    ajv.compile(JSON.parse(readFileSync(path.join(ROOT, 'schemas', `${kind}.json`), 'utf8'))),
  ]),
) as Record<Kind, ValidateFunction>;

/** Which file a fixture is, by its name and folder. */
function kindOf(file: string): Kind {
  if (path.basename(file).startsWith('access')) return 'access';
  if (
    path.basename(file).startsWith('restconfig') ||
    file.includes(`${path.sep}restconfig${path.sep}`)
  )
    return 'rest-config';
  return 'entity-schema';
}

/** The documents of a fixture, or undefined when it is not even valid JSON or YAML. */
function documentsOf(file: string): unknown[] | undefined {
  const text = readFileSync(file, 'utf8');
  try {
    const documents = file.endsWith('.json')
      ? [JSON.parse(text) as unknown]
      : loadAll(text, undefined, { schema: CORE_SCHEMA });
    return documents.filter((document) => document !== null && document !== undefined);
  } catch {
    return undefined;
  }
}

/** The schema's complaints about a fixture, one line each (empty when it accepts it). */
function problems(file: string): string[] {
  const validate = validators[kindOf(file)];
  return (documentsOf(file) ?? []).flatMap((document) =>
    validate(document)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`),
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ya?ml|json)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

const validFiles = filesUnder(FIXTURES).filter(
  (file) => !file.includes(`${path.sep}invalid${path.sep}`),
);

/** Codes that only a structural problem (shape, type, unknown or missing key) produces. */
const STRUCTURAL_CODES =
  /\((NOT_AN_ENTITY|UNKNOWN_KEY|MISSING_KEY|INVALID_VALUE|MISSING_TYPE_CONFIG|EMPTY_FIELDS|REST_INVALID_TYPE|REST_UNKNOWN_KEY|REST_MISSING_KEY|REST_INVALID_VALUE)\)$/m;

/** Invalid fixtures that parse and whose expected diagnostics name a structural problem. */
const structurallyInvalid = [
  path.join(FIXTURES, 'invalid'),
  path.join(FIXTURES, 'restconfig', 'invalid'),
].flatMap((dir) =>
  readdirSync(dir)
    .map((name) => path.join(dir, name))
    .filter((folder) =>
      STRUCTURAL_CODES.test(readFileSync(path.join(folder, 'expected.txt'), 'utf8')),
    )
    .flatMap((folder) => filesUnder(folder).filter((file) => (documentsOf(file) ?? []).length > 0)),
);

describe('shipped JSON Schemas', () => {
  it('are in the published package', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      files: string[];
    };
    expect(pkg.files).toContain('schemas');
    for (const kind of KINDS)
      expect(existsSync(path.join(ROOT, 'schemas', `${kind}.json`))).toBe(true);
  });

  it('cover every kind of valid fixture', () => {
    expect(new Set(validFiles.map(kindOf))).toEqual(new Set(KINDS));
  });

  it.each(validFiles.map((file) => path.relative(FIXTURES, file)))('accept %s', (file) => {
    expect(problems(path.join(FIXTURES, file))).toEqual([]);
  });

  it('find structural problems in at least 15 invalid fixtures', () => {
    expect(structurallyInvalid.length).toBeGreaterThanOrEqual(15);
  });

  it.each(structurallyInvalid.map((file) => path.relative(FIXTURES, file)))('refuse %s', (file) => {
    expect(problems(path.join(FIXTURES, file))).not.toEqual([]);
  });

  it("accept every key of Gemini's schemas (SPEC §2)", () => {
    const gemini = {
      type: 'ENTITY',
      entity: {
        name: 'NODE',
        lk: ['id'],
        tree: { enabled: true, parentField: 'parent' },
        refDisplayFields: ['id'],
        refDisplaySeparator: ' - ',
        fields: [
          { name: 'id', type: 'STRING' },
          { name: 'parent', type: 'STRING' },
          { name: 'kind', type: 'STRING' },
          { name: 'value', type: 'ANY', any: { typeField: 'kind' } },
          {
            name: 'place',
            type: 'GEOHASH_LOCATION',
            geoHashLocation: { includeGooglePlaceId: true },
          },
          {
            name: 'size',
            type: 'SELECT',
            select: { elems: [{ value: 'S', displayName: 'Small', driveFields: ['x'] }] },
          },
        ],
      },
    };
    expect(validators['entity-schema'](gemini)).toBe(true);
    const single = {
      type: 'ENTITY',
      entity: { name: 'SETTINGS', singleRecord: true, fields: [{ name: 'a', type: 'STRING' }] },
    };
    expect(validators['entity-schema'](single)).toBe(true);
  });
});

describe('files that name their JSON Schema', () => {
  const schemaText = [
    '{"$schema": "../node_modules/@entity-gen/cli/schemas/entity-schema.json",',
    ' "type": "ENTITY", "entity": {"name": "BOOK", "lk": ["isbn"], "fields": [{"name": "isbn", "type": "STRING"}]}}',
  ].join('\n');

  function bookModel(): SchemaModel {
    const { entities, diagnostics } = loadSchemas([{ file: 'book.json', text: schemaText }]);
    expect(diagnostics.map(formatDiagnostic)).toEqual([]);
    const { model } = normalize(entities);
    if (model === undefined) throw new Error('book.json did not normalize');
    return model;
  }

  it('load a schema with $schema, which stays out of the stored document', () => {
    const { entities } = loadSchemas([{ file: 'book.json', text: schemaText }]);
    expect(entities.map((entity) => entity.entity.name)).toEqual(['BOOK']);
    expect(Object.keys(entities[0]!.document as object)).toEqual(['type', 'entity']);
  });

  it('refuse a $schema that is not a string', () => {
    const text = schemaText.replace(
      '"../node_modules/@entity-gen/cli/schemas/entity-schema.json"',
      '3',
    );
    const { diagnostics } = loadSchemas([{ file: 'book.json', text }]);
    expect(diagnostics.map(formatDiagnostic)).toEqual([
      "book.json:1:13: '$schema' of the document must be a string, not the number 3 (INVALID_VALUE)",
    ]);
  });

  it('load a REST configuration and an access file with $schema', () => {
    const model = bookModel();
    const rest = loadRestConfig(
      {
        file: 'rest.json',
        text: '{"$schema": "x.json", "type": "ENTITY", "entity": "BOOK", "config": {"allowedMethods": ["GET_LIST"]}}',
      },
      model,
    );
    expect(rest.diagnostics.map(formatDiagnostic)).toEqual([]);
    expect(rest.configs.get('BOOK')?.allowedMethods).toEqual(['GET_LIST']);
    const access = loadAccess(
      { file: 'access.json', text: '{"$schema": "x.json", "default": ["editor"]}' },
      model,
    );
    expect(access.diagnostics.map(formatDiagnostic)).toEqual([]);
    expect(access.access?.get('BOOK')?.methods.NEW).toEqual(['editor']);
  });

  it("init's example names the shipped JSON Schema and satisfies it", () => {
    const example = readFileSync(path.join(ROOT, 'cli', 'init.ts'), 'utf8');
    expect(SCHEMA_MODELINE).toMatch(
      /^# yaml-language-server: \$schema=\.\/node_modules\/@entity-gen\/cli\/(schemas\/entity-schema\.json)$/,
    );
    const shipped = SCHEMA_MODELINE.replace(/^.*\/@entity-gen\/cli\//, '');
    expect(existsSync(path.join(ROOT, shipped))).toBe(true);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the docs show the template literal's source text
    expect(example).toContain('${SCHEMA_MODELINE}');
  });
});
