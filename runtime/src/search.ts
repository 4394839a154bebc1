/**
 * Full-text search (SPEC §17): `search: [name, description]` on an entity makes its lists and
 * counts take `q=hammer steel`, which matches the records holding every word (the last one as a
 * prefix, as one types), best matches first unless `orderBy` is given.
 *
 * - The words of `q` are its runs of letters, marks and digits (`searchWords`); everything else
 *   separates them, so no character of `q` is ever query syntax on either driver (`"`, `*`, `-`,
 *   `OR`, `NEAR`, parentheses are plain text or separators).
 * - SQLite: an FTS5 table `<table>__search` (tokenizer `unicode61 remove_diacritics 2`: case and
 *   diacritics insensitive) holds the searched fields of each record. Entity tables are `WITHOUT
 *   ROWID`, so `<table>__search_keys` gives each record's key the integer rowid of its FTS row.
 *   Triggers on the entity table keep both in step inside the write's own statement, so in its
 *   transaction. Relevance is `bm25()`.
 * - PostgreSQL: a stored generated `tsvector` column `_eg_search` (text search configuration
 *   `searchLanguage`, `simple` by default) over the searched fields with Latin diacritics folded
 *   (`translate`, immutable, no extension needed), and a GIN index on it. Relevance is `ts_rank`.
 */
import type { SearchDescriptor, TableDescriptor } from './driver.js';
import { BadRequestError } from './errors.js';
import { quoteIdentifier } from './sql/dialect.js';

/** The PostgreSQL column holding the searched text as a `tsvector`. */
export const SEARCH_COLUMN = '_eg_search';

/** Most words one `q` may hold. */
export const MAX_SEARCH_WORDS = 16;

/** Longest `q`, in characters. */
export const MAX_SEARCH_LENGTH = 500;

/** The words of a `q` parameter (see the header); 400 when there is none or too many. */
export function searchWords(text: string): string[] {
  if (text.length > MAX_SEARCH_LENGTH) {
    throw new BadRequestError(
      `Parameter q is ${text.length} characters long; at most ${MAX_SEARCH_LENGTH} are allowed`,
    );
  }
  const words = text.match(/[\p{L}\p{M}\p{N}]+/gu) ?? [];
  if (words.length === 0) {
    throw new BadRequestError(
      'Parameter q holds no word to search for (a word is letters and digits)',
    );
  }
  if (words.length > MAX_SEARCH_WORDS) {
    throw new BadRequestError(
      `Parameter q holds ${words.length} words; at most ${MAX_SEARCH_WORDS} are allowed`,
    );
  }
  return words;
}

// ---------------------------------------------------------------------------------------------
// SQLite

/** The FTS5 table of a searchable table. */
export function sqliteSearchTable(table: string): string {
  return `${table}__search`;
}

/** The table giving each record's key the rowid of its FTS5 row. */
export function sqliteSearchKeysTable(table: string): string {
  return `${table}__search_keys`;
}

/** The rowid column of the keys table. */
const SEARCH_ID = '_eg_search_id';

/** The FTS5 column of the `index`-th searched field (positional: `rank` and `rowid` are FTS5's). */
function ftsColumn(index: number): string {
  return `c${index}`;
}

/**
 * The statements that create the search of a SQLite table (the FTS5 table, its keys table and
 * the triggers that keep them in step), each `IF NOT EXISTS`.
 */
export function sqliteSearchCreateSql(table: TableDescriptor): string[] {
  const search = requireSearch(table);
  const t = quoteIdentifier(table.table);
  const fts = quoteIdentifier(sqliteSearchTable(table.table));
  const keys = quoteIdentifier(sqliteSearchKeysTable(table.table));
  const id = quoteIdentifier(SEARCH_ID);
  const keyColumns = table.key.map(quoteIdentifier);
  const keyTypes = table.key.map((name) => {
    const kind = table.columns.find((column) => column.name === name)?.kind;
    return kind === 'integer' || kind === 'boolean'
      ? 'INTEGER'
      : kind === 'double'
        ? 'REAL'
        : 'TEXT';
  });
  const columns = search.fields.map((_, index) => quoteIdentifier(ftsColumn(index)));
  const fields = search.fields.map(quoteIdentifier);
  const keyIs = (row: 'old' | 'new'): string =>
    keyColumns.map((column) => `${column} = ${row}.${column}`).join(' AND ');
  const rowidOf = (row: 'old' | 'new'): string => `(SELECT ${id} FROM ${keys} WHERE ${keyIs(row)})`;
  const trigger = (suffix: string): string =>
    quoteIdentifier(`${sqliteSearchTable(table.table)}_${suffix}`);
  return [
    `CREATE TABLE IF NOT EXISTS ${keys} (\n  ${id} INTEGER PRIMARY KEY,\n  ${keyColumns
      .map((column, index) => `${column} ${keyTypes[index]} NOT NULL`)
      .join(',\n  ')},\n  UNIQUE (${keyColumns.join(', ')})\n)`,
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(${columns.join(', ')}, tokenize = 'unicode61 remove_diacritics 2')`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('insert')} AFTER INSERT ON ${t} BEGIN\n` +
      `  INSERT INTO ${keys} (${keyColumns.join(', ')}) VALUES (${keyColumns.map((c) => `new.${c}`).join(', ')});\n` +
      `  INSERT INTO ${fts} (rowid, ${columns.join(', ')}) VALUES (last_insert_rowid(), ${fields.map((f) => `new.${f}`).join(', ')});\n` +
      'END',
    `CREATE TRIGGER IF NOT EXISTS ${trigger('update')} AFTER UPDATE OF ${[...new Set([...keyColumns, ...fields])].join(', ')} ON ${t} BEGIN\n` +
      `  UPDATE ${keys} SET ${keyColumns.map((c) => `${c} = new.${c}`).join(', ')} WHERE ${keyIs('old')};\n` +
      `  UPDATE ${fts} SET ${columns.map((c, index) => `${c} = new.${fields[index]!}`).join(', ')} WHERE rowid = ${rowidOf('new')};\n` +
      'END',
    `CREATE TRIGGER IF NOT EXISTS ${trigger('delete')} AFTER DELETE ON ${t} BEGIN\n` +
      `  DELETE FROM ${fts} WHERE rowid = ${rowidOf('old')};\n` +
      `  DELETE FROM ${keys} WHERE ${keyIs('old')};\n` +
      'END',
  ];
}

/** The statements that index the rows a SQLite table already holds (after `sqliteSearchCreateSql`). */
export function sqliteSearchFillSql(table: TableDescriptor): string[] {
  const search = requireSearch(table);
  const t = quoteIdentifier(table.table);
  const fts = quoteIdentifier(sqliteSearchTable(table.table));
  const keys = quoteIdentifier(sqliteSearchKeysTable(table.table));
  const id = quoteIdentifier(SEARCH_ID);
  const keyColumns = table.key.map(quoteIdentifier);
  const columns = search.fields.map((_, index) => quoteIdentifier(ftsColumn(index)));
  return [
    `DELETE FROM ${fts}`,
    `DELETE FROM ${keys}`,
    `INSERT INTO ${keys} (${keyColumns.join(', ')}) SELECT ${keyColumns.join(', ')} FROM ${t}`,
    `INSERT INTO ${fts} (rowid, ${columns.join(', ')}) SELECT k.${id}, ${search.fields
      .map((field) => `t.${quoteIdentifier(field)}`)
      .join(', ')} FROM ${keys} AS k JOIN ${t} AS t ON ${keyColumns
      .map((c) => `t.${c} = k.${c}`)
      .join(' AND ')}`,
  ];
}

/** The statements that drop the search of a SQLite table (`IF EXISTS`). */
export function sqliteSearchDropSql(table: string): string[] {
  const trigger = (suffix: string): string =>
    quoteIdentifier(`${sqliteSearchTable(table)}_${suffix}`);
  return [
    `DROP TRIGGER IF EXISTS ${trigger('insert')}`,
    `DROP TRIGGER IF EXISTS ${trigger('update')}`,
    `DROP TRIGGER IF EXISTS ${trigger('delete')}`,
    `DROP TABLE IF EXISTS ${quoteIdentifier(sqliteSearchTable(table))}`,
    `DROP TABLE IF EXISTS ${quoteIdentifier(sqliteSearchKeysTable(table))}`,
  ];
}

/** The FTS5 query of the words: each a quoted phrase, the last one a prefix; all must match. */
export function sqliteMatchText(words: readonly string[]): string {
  return words
    .map((word, index) => {
      const phrase = `"${word.replaceAll('"', '""')}"`;
      return index === words.length - 1 ? `${phrase} *` : phrase;
    })
    .join(' ');
}

/**
 * The FROM-clause join that keeps the rows of `table` matching the words, with their relevance
 * as `"_eg_search"."_eg_rank"` (lower is better); binds one parameter, the match text.
 */
export function sqliteSearchJoin(
  table: TableDescriptor,
  tableSql: string,
  bind: (value: unknown) => string,
  words: readonly string[],
): { join: string; rank: string } {
  const fts = quoteIdentifier(sqliteSearchTable(table.table));
  const keys = quoteIdentifier(sqliteSearchKeysTable(table.table));
  const alias = quoteIdentifier('_eg_search');
  const keyColumns = table.key.map(quoteIdentifier);
  const keyAlias = (index: number): string => quoteIdentifier(`_eg_k${index}`);
  const select = keyColumns.map((c, index) => `k.${c} AS ${keyAlias(index)}`).join(', ');
  const on = keyColumns
    .map((c, index) => `${alias}.${keyAlias(index)} = ${tableSql}.${c}`)
    .join(' AND ');
  const join =
    `JOIN (SELECT ${select}, bm25(${fts}) AS "_eg_rank" FROM ${fts} JOIN ${keys} AS k ON k.${quoteIdentifier(SEARCH_ID)} = ${fts}.rowid ` +
    `WHERE ${fts} MATCH ${bind(sqliteMatchText(words))}) AS ${alias} ON ${on}`;
  return { join, rank: `${alias}."_eg_rank"` };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

/**
 * Latin letters with diacritics and the letters they fold to, for `translate` (immutable, so a
 * generated column may use it); combining marks (U+0300–U+036F) are deleted. The same folding is
 * applied to the words of `q` (`foldDiacritics`).
 */
const FOLDING: { readonly from: string; readonly to: string } = (() => {
  let from = '';
  let to = '';
  const ranges: [number, number][] = [
    [0xc0, 0x24f],
    [0x1e00, 0x1eff],
  ];
  for (const [first, last] of ranges) {
    for (let code = first; code <= last; code++) {
      const char = String.fromCodePoint(code);
      const base = char.normalize('NFD').replace(/\p{M}/gu, '');
      if (base !== char && base.length === 1) {
        from += char;
        to += base;
      }
    }
  }
  for (let code = 0x300; code <= 0x36f; code++) from += String.fromCodePoint(code);
  return { from, to };
})();

const FOLD_MAP: ReadonlyMap<string, string> = new Map(
  [...FOLDING.from].map((char, index) => [char, [...FOLDING.to][index] ?? '']),
);

/** `text` with the diacritics the PostgreSQL search folds removed, as its `translate` does. */
export function foldDiacritics(text: string): string {
  let folded = '';
  for (const char of text) folded += FOLD_MAP.get(char) ?? char;
  return folded;
}

/** `'text'` as a PostgreSQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** The text search configuration of a search as a `regconfig` literal. */
export function postgresLanguage(search: SearchDescriptor): string {
  return `${literal(search.language)}::regconfig`;
}

/** The column definition of `_eg_search`: a stored generated `tsvector`. */
export function postgresSearchColumnSql(table: TableDescriptor): string {
  const search = requireSearch(table);
  const text = search.fields
    .map((field) => `coalesce(${quoteIdentifier(field)}, '')`)
    .join(` || ' ' || `);
  return (
    `${quoteIdentifier(SEARCH_COLUMN)} tsvector GENERATED ALWAYS AS (to_tsvector(${postgresLanguage(search)}, ` +
    `translate(${text}, ${literal(FOLDING.from)}, ${literal(FOLDING.to)}))) STORED`
  );
}

/** The tsquery text of the words: each a quoted lexeme, the last a prefix; all must match. */
export function postgresQueryText(words: readonly string[]): string {
  return words
    .map((word, index) => {
      const lexeme = `'${foldDiacritics(word).replaceAll("'", "''").replaceAll('\\', '\\\\')}'`;
      return index === words.length - 1 ? `${lexeme}:*` : lexeme;
    })
    .join(' & ');
}

function requireSearch(table: TableDescriptor): SearchDescriptor {
  if (table.search === undefined) throw new Error(`Table ${table.table} has no search`);
  return table.search;
}
