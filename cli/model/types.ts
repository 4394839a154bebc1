/**
 * The types of the model the emitters and templates read: service, entities, fields, routes; never
 * the schema as written.
 */
import type { ColumnKind, TableDescriptor } from '@entity-gen/runtime/ddl';
import type { EntityAccess } from '../access/types.js';
import type { EntityRestConfig, RestMethod } from '../restconfig/types.js';
import type { FieldType, JsonValue, SourcePosition } from '../schema/types.js';

import type { FieldConstraints } from '@entity-gen/runtime/convert';
import type { Generator } from '@entity-gen/runtime/schema';

export type { ColumnKind } from '@entity-gen/runtime/ddl';

/**
 * A field or an array element, with every decision the emitters need already made. Emitters and
 * templates read only this model, never the schema as written.
 */
export interface TypeModel {
  readonly type: FieldType;
  /** TypeScript expression of the `Converter` that reads this value from a request body. */
  readonly converter: string;
  /** Allowed values of an ENUM or SELECT, in schema order. */
  readonly values?: readonly string[];
  /** Inner fields of an OBJECT, or of each value of a DICTIONARY. */
  readonly fields?: readonly FieldModel[];
  /** TypeScript interface of an OBJECT, or of each value of a DICTIONARY. */
  readonly objectType?: string;
  /** Element of an ARRAY. */
  readonly element?: TypeModel;
  /** Target entity of an ENTITY_REF. */
  readonly refEntity?: string;
  /** The value's constraints (SPEC §16), when it declares any. */
  readonly constraints?: FieldConstraints;
}

export interface FieldModel extends TypeModel {
  readonly name: string;
  /** Local variable holding the converted value in generated code. */
  readonly variable: string;
  /** Key fields are always required. */
  readonly required: boolean;
  readonly displayName?: string;
  readonly description?: string;
  readonly indexed: boolean;
  /** `index: ci`: an index on the case-folded text (top-level text fields). */
  readonly ciIndexed: boolean;
  readonly isKey: boolean;
  /** What the server generates for the field (SPEC §16), top-level fields only. */
  readonly generated?: Generator;
  readonly columnKind: ColumnKind;
  /** Canonical value migrations fill existing records with (top-level fields only). */
  readonly default?: JsonValue;
  /** The field's previous name, for the next migration (top-level fields only). */
  readonly renamedFrom?: string;
  /** Where the field's name is written (top-level fields only), for diagnostics. */
  readonly position?: SourcePosition;
}

/** A module-level constant of a generated validator module, e.g. an ENUM or ARRAY converter. */
export interface ConverterConstant {
  readonly name: string;
  /** The runtime factory it is made with: `enumConverter(['A', 'B'])`, `arrayOf(toText)`. */
  readonly factory:
    | 'enumConverter'
    | 'selectConverter'
    | 'dictionaryOf'
    | 'arrayOf'
    | 'constrained';
  /** The factory's argument: the allowed values, or the name of a converter. */
  readonly argument: readonly string[] | string;
  /** Further arguments, printed as JSON (`constrained`: the type, the rules, the entity name). */
  readonly extra?: readonly JsonValue[];
}

/** A generated reader function for an OBJECT shape (or the value shape of a DICTIONARY). */
export interface ObjectReader {
  readonly functionName: string;
  /** Name of the TypeScript interface the reader returns. */
  readonly typeName: string;
  /** Name of the constant holding the allowed field names. */
  readonly fieldSetName: string;
  readonly fields: readonly FieldModel[];
  /** What messages call it, e.g. `PRODUCT.address`. */
  readonly label: string;
}

export interface EntityModel {
  /** As written, e.g. `ORDER_LINE`. */
  readonly name: string;
  readonly displayName?: string;
  readonly description?: string;
  /** `OrderLine`: record type and identifier stem. */
  readonly typeName: string;
  /** `orderLine`. */
  readonly camelName: string;
  /** `order-line`: folder under `src/entities/`. */
  readonly fileName: string;
  /** `order_line`: URL segment shown in docs (any case is accepted) and SQL table name. */
  readonly pathName: string;
  readonly tableName: string;
  readonly lk: readonly string[];
  readonly lkSeparator: string;
  readonly singleRecord: boolean;
  /** Id of the single record (only for single-record entities). */
  readonly lkValue?: string;
  readonly fields: readonly FieldModel[];
  /** The fields whose values make the record id, in `lk` order; none when `fixedKeyColumn` is set. */
  readonly keyFields: readonly FieldModel[];
  /** The table's primary key columns: `lk`, or `[fixedKeyColumn]`. */
  readonly storageKey: readonly string[];
  /**
   * The storage-only key column (always holding `lkValue`) of a single-record entity that does not
   * declare exactly one key field; such an entity is addressed by `lkValue` alone.
   */
  readonly fixedKeyColumn?: string;
  /** Constants (ENUM/SELECT/ARRAY/DICTIONARY converters) in dependency order. */
  readonly constants: readonly ConverterConstant[];
  /** Readers of nested OBJECT/DICTIONARY shapes, outermost first. */
  readonly objectReaders: readonly ObjectReader[];
  /** The storage layout the drivers create (the runtime's `tableOf`, as `defineEntity` derives it). */
  readonly table: TableDescriptor;
  /**
   * Entities this one refers to with ENTITY_REF (at any depth) whose ids are numbers: the one
   * fact about its document that only the whole schema knows. Sorted.
   */
  readonly integerKeyed: readonly string[];
  /** The ENTITY document as written. */
  readonly document: JsonValue;
  /** First 12 hex digits of the SHA-256 of the canonical document (the headers of its files). */
  readonly documentHash: string;
  /** Schema file it came from, as given. */
  readonly sourceFile: string;
  /** The entity's previous name, for the next migration. */
  readonly renamedFrom?: string;
  /** Where the document's `entity` key is written, for diagnostics. */
  readonly position?: SourcePosition;
}

/** The normalized, frozen model every emitter works from. */
export interface SchemaModel {
  /** Sorted by name. */
  readonly entities: readonly EntityModel[];
  /** Schema files as given, in order. */
  readonly sourceFiles: readonly string[];
  /** SHA-256 (hex) of the canonical schema. */
  readonly hash: string;
  /** First 12 hex digits of `hash`. */
  readonly shortHash: string;
}

/** One route of an entity's router: a method switched on by the REST configuration. */
export interface RouteModel {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /**
   * Path under the entity's prefix: `/` (the collection), `/*id` (one record), `/*id/restore`
   * (the restore of a soft-deleted record) or `/*id/history` (the kept versions of a record).
   */
  readonly path: '/' | '/*id' | '/*id/restore' | '/*id/history';
  /** As documentation shows it: `/data/product` or `/data/product/{id}`. */
  readonly fullPath: string;
  readonly rest: RestMethod;
  /** The runtime operation the route calls. */
  readonly operation:
    | 'listRecords'
    | 'insertRecords'
    | 'getRecord'
    | 'replaceRecord'
    | 'patchRecord'
    | 'deleteRecord'
    | 'patchRecords'
    | 'deleteRecords'
    | 'restoreRecord'
    | 'getRecordHistory';
  /** What the route does, for comments and the README: `lists records, filtered, sorted and paged`. */
  readonly summary: string;
  /** The operation takes the record id of the path. */
  readonly takesId: boolean;
  /** The operation takes the entity's REST configuration (lists). */
  readonly takesRestConfig: boolean;
  /** The operation runs the entity's hooks (writes). */
  readonly takesHooks: boolean;
}

/** An entity as the service serves it: its REST configuration, access rules and routes. */
export interface ServedEntity extends EntityModel {
  readonly restConfig: EntityRestConfig;
  readonly access?: EntityAccess;
  /** The routes of its router, in the order they are added; the README lists the same. */
  readonly routes: readonly RouteModel[];
  /** `GET /entity/{entity}/recordCounts` answers (GET_LIST is switched on). */
  readonly counts: boolean;
  /**
   * What lists filter by: scalar fields, scalar fields inside OBJECT fields (`address.city`) and
   * ARRAY fields of scalars (membership), each with the type of its values.
   */
  readonly filterable: readonly FilterableModel[];
  /** The fields `orderBy` accepts (`allowedOrderingFields`, else every sortable field). */
  readonly sortable: readonly string[];
}

/** A field path lists filter by. */
export interface FilterableModel {
  /** `price`, `dimensions.width`. */
  readonly path: string;
  /** The field there; for an ARRAY, filters test its elements (`type.element`). */
  readonly type: TypeModel;
}

/** The model of a whole generation: the schema, and how each entity is served. */
export interface ServiceModel extends SchemaModel {
  readonly entities: readonly ServedEntity[];
  /** Some entity has access rules (the service was generated with an access file). */
  readonly accessControlled: boolean;
}
