/**
 * `entity-gen init`: a commented example schema to start from, written into the working folder
 * (never over an existing file), and the next commands.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The file `init` writes. */
export const EXAMPLE_SCHEMA_FILE = 'schema.yaml';

/**
 * Where editors with the YAML language server find the JSON Schema of schema files: the copy in
 * the locally installed CLI package, so completion matches the version that generates.
 */
export const SCHEMA_MODELINE =
  '# yaml-language-server: $schema=./node_modules/@entity-gen/cli/schemas/entity-schema.json';

const EXAMPLE_SCHEMA = `${SCHEMA_MODELINE}
# An ENTITY schema for entity-gen: one YAML document per entity, separated by ---.
# Every key is described in the schema reference (docs/schema.md of entity-gen).
type: ENTITY
entity:
  name: BOOK                 # the entity: /data/book in the generated service
  displayName: Book
  lk: [isbn]                 # the logical key: the record id is the isbn
  fields:
    - { name: isbn, type: STRING }
    - { name: title, type: STRING, required: true }
    - { name: price, type: DECIMAL }                    # exact; "12.50" is answered as "12.5"
    - { name: published, type: DATE }                   # YYYY-MM-DD
    - { name: format, type: ENUM, enums: [HARDCOVER, PAPERBACK, EBOOK] }
    - { name: tags, type: ARRAY, array: { type: STRING } }
    - { name: author, type: ENTITY_REF, entityRef: { entity: AUTHOR } }
---
type: ENTITY
entity:
  name: AUTHOR
  lk: [id]
  fields:
    - { name: id, type: STRING }
    - { name: name, type: STRING, required: true, index: true }
    - { name: born, type: DATE }
`;

/** Writes the example, or says why not (a file of that name exists). */
export async function writeExampleSchema(
  dir: string,
): Promise<{ message: string; problem?: undefined } | { message?: undefined; problem: string }> {
  try {
    await writeFile(join(dir, EXAMPLE_SCHEMA_FILE), EXAMPLE_SCHEMA, { flag: 'wx' });
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? error.code : undefined;
    if (code === 'EEXIST')
      return {
        problem: `${EXAMPLE_SCHEMA_FILE} already exists; init never overwrites it (remove or rename it first)`,
      };
    throw error;
  }
  return {
    message:
      `Wrote ${EXAMPLE_SCHEMA_FILE}, an example schema with two entities. Next:\n` +
      `  npx entity-gen generate ${EXAMPLE_SCHEMA_FILE}     # writes the service into ./service\n` +
      `  cd service && npm install && npm run build && npm start\n`,
  };
}
