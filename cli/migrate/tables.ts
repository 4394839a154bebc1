import type { TableDescriptor } from '@entity-gen/runtime/ddl';
import type { EntityModel } from '../model/types.js';

/**
 * The storage descriptor of an entity, exactly as the generated `definition.ts` declares it
 * (templates/entity/definition.ts.hbs), so migrations target the tables the drivers expect.
 */
export function tableDescriptor(entity: EntityModel): TableDescriptor {
  return {
    entity: entity.name,
    table: entity.tableName,
    columns: [
      ...(entity.fixedKeyColumn === undefined
        ? []
        : [
            {
              name: entity.fixedKeyColumn,
              kind: 'text' as const,
              fieldType: 'STRING',
              required: true,
              indexed: false,
              fixed: entity.lkValue ?? '',
            },
          ]),
      ...entity.fields.map((field) => ({
        name: field.name,
        kind: field.columnKind,
        fieldType: field.type,
        required: field.required,
        indexed: field.indexed,
      })),
    ],
    key: entity.storageKey,
    keySeparator: entity.lkSeparator,
    ...(entity.table.indexes === undefined ? {} : { indexes: entity.table.indexes }),
  };
}

/** The composite indexes an entity declares, as written (`[category, -price]`). */
export function declaredIndexes(entity: EntityModel): string[] {
  return (entity.table.indexes ?? []).map(
    (columns) =>
      `[${columns.map(({ column, descending }) => (descending ? `-${column}` : column)).join(', ')}]`,
  );
}
