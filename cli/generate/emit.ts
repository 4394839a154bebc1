import { createHash } from 'node:crypto';
import type {
  EntityModel,
  FieldModel,
  ServedEntity,
  ServiceModel,
  TypeModel,
} from '../model/types.js';
import type { EmitOptions } from './options.js';
import { openApiDocument } from './openapi.js';
import { headerLine, REGENERATE_COMMAND } from '../header.js';
import { generatorVersion } from './paths.js';
import { ModuleScope } from './scope.js';
import { kebabCase, pascalCase } from '../model/names.js';
import { generatorFingerprint } from './fingerprint.js';
import { loadTemplates } from './templates.js';

export {
  DRIVER_CHOICES,
  REGENERATE_COMMAND,
  type DriverChoice,
  type EmitOptions,
} from './options.js';

/**
 * Who owns a file of the output folder. The generator rewrites its own files on every run (they
 * carry the DO NOT EDIT header); a user file is created once, when absent, and never touched again.
 */
export type FileOwner = 'generator' | 'user';

/** A generated file before formatting and without its header. */
export interface EmittedFile {
  readonly path: string;
  /** Its text, or for a file with `madeFrom`, how to make it (only when it must be). */
  readonly contents: string | (() => string);
  /**
   * What a generated file is made from, when that is cheaper to compare than the file to make
   * (an entity's files, `openapi.json`): the generator's fingerprint (./fingerprint.ts), the
   * template and the JSON of the model part. Equal keys make equal text, so a file whose key is
   * the one recorded at the last generation is neither made nor formatted again (./format.ts).
   */
  readonly madeFrom?: string;
  /** Schema files the file was generated from (for its header). */
  readonly sources: readonly string[];
  /**
   * Short hash of what the file was generated from (for its header): the entity's document for an
   * entity's files, so that changing one entity changes only its files' headers; the whole schema
   * otherwise.
   */
  readonly hash: string;
  readonly owner: FileOwner;
}

/**
 * The service folder's `.gitignore` (a user file: created when absent, never changed). Sources,
 * `package-lock.json`, migrations and the manifest are committed.
 */
const GITIGNORE = `# Created by entity-gen once; yours to extend. What git leaves out of this service folder:
# installed packages, the build, the SQLite database and its journals, local secrets, logs.
node_modules/
dist/
data/
*.db
*.db-journal
*.db-wal
*.db-shm
*.sqlite
*.sqlite-wal
*.sqlite-shm
.env
.env.*
*.log
coverage/
`;

/** Versions written into the generated package.json; kept in one place. */
const SERVICE_DEPENDENCIES = {
  // npm picks the newest version whose engines accept the Node that installs: 13 on Node 22 and
  // 24 (12 aborts on Node 24.19+ when the GC finalizes a statement: its node::ObjectWrap removes
  // an environment cleanup hook with no environment), 12 on Node 20 (13 needs Node 22).
  betterSqliteVersion: '^12.4.1 || ^13.0.0',
  pgVersion: '^8.16.3',
  typesNodeVersion: '^20.19.0',
  tsxVersion: '^4.20.0',
  typescriptVersion: '~5.9.3',
};

/**
 * Emits every file of the service from the model with the templates. The TypeScript comes out
 * unformatted; the format step (./format.ts) lays it out. `accessText` is the access file as
 * written, shown in the README.
 */
export function emitService(
  model: ServiceModel,
  options: EmitOptions,
  accessText = '',
  keys: ReadonlyMap<ServedEntity, string> = entityKeys(model),
): EmittedFile[] {
  const templates = loadTemplates();
  const all = model.sourceFiles;
  const files: EmittedFile[] = [];
  const owner = 'generator';
  const fingerprint = generatorFingerprint();
  for (const entity of model.entities) {
    const dir = `src/entities/${entity.fileName}`;
    const sources = [entity.sourceFile];
    const hash = entity.documentHash;
    // An entity's files are made from the entity's model alone: rendered only when asked.
    const madeFrom = keys.get(entity) ?? entityKey(entity);
    const rendered = (
      template: 'entityDefinition' | 'entityClient' | 'entityRoutes',
      view: (entity: ServedEntity) => object,
    ): Pick<EmittedFile, 'contents' | 'madeFrom'> => ({
      contents: () => templates[template](view(entity)),
      madeFrom: `${template}\0${madeFrom}`,
    });
    files.push(
      {
        path: `${dir}/definition.ts`,
        ...rendered('entityDefinition', definitionView),
        sources,
        hash,
        owner,
      },
      {
        path: `${dir}/client.ts`,
        ...rendered('entityClient', entityClientView),
        sources,
        hash,
        owner,
      },
      { path: `${dir}/routes.ts`, ...rendered('entityRoutes', routesView), sources, hash, owner },
      {
        path: hooksPath(entity),
        contents: templates.hooks(hooksView(entity)),
        sources,
        hash,
        owner: 'user',
      },
    );
  }
  const title = serviceTitle(options.outputDir);
  const hash = model.shortHash;
  files.push(
    { path: 'src/app.ts', contents: templates.app({ title }), sources: all, hash, owner },
    {
      path: 'src/client.ts',
      contents: templates.client(model),
      sources: all,
      hash,
      owner,
    },
    { path: 'src/service.ts', contents: templates.service(model), sources: all, hash, owner },
    { path: 'src/server.ts', contents: templates.server({}), sources: all, hash, owner: 'user' },
    { path: 'tsconfig.json', contents: templates.tsconfig({}), sources: all, hash, owner },
    { path: '.gitignore', contents: GITIGNORE, sources: all, hash, owner: 'user' },
    {
      path: 'package.json',
      contents: templates.packageJson({
        headerLine: headerLine(hash, all),
        packageName: packageName(options.outputDir),
        description: `REST service for ${model.entities.map((entity) => entity.name).join(', ')}`,
        runtimeSpec: options.runtimeSpec ?? `^${generatorVersion()}`,
        sqlite: (options.driver ?? 'both') !== 'postgres',
        postgres: (options.driver ?? 'both') !== 'sqlite',
        ...SERVICE_DEPENDENCIES,
      }),
      sources: all,
      hash,
      owner,
    },
    {
      path: 'openapi.json',
      contents: () =>
        `${JSON.stringify(
          {
            // JSON has no comments: the header is an extension member, which OpenAPI allows.
            'x-generated': `${headerLine(hash, all)} Regenerate: ${REGENERATE_COMMAND}`,
            ...openApiDocument(model, title),
          },
          null,
          2,
        )}\n`,
      // Large (tens of kilobytes per entity), and made from the model and the title alone.
      madeFrom: `openapi\0${fingerprint}\0${title}\0${JSON.stringify(model)}`,
      sources: all,
      hash,
      owner,
    },
    {
      path: 'README.md',
      contents: templates.readme({
        title,
        sourceList: all.map((file) => `\`${file}\``).join(', '),
        entities: model.entities.map(readmeEntityView),
        access:
          model.accessControlled && options.accessFile !== undefined
            ? readmeAccessView(model, options.accessFile, accessText)
            : undefined,
      }),
      sources: all,
      hash,
      owner,
    },
  );
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * What identifies an entity's model for the cache of generated files: the hash of the generator's
 * fingerprint and the entity's JSON (which leaves out source positions). Made once per entity for
 * all of its files.
 */
export function entityKey(entity: ServedEntity): string {
  return createHash('sha256')
    .update(`${generatorFingerprint()}\0${JSON.stringify(entity)}`)
    .digest('hex');
}

/** `entityKey` of every entity of the model. */
export function entityKeys(model: ServiceModel): Map<ServedEntity, string> {
  return new Map(model.entities.map((entity) => [entity, entityKey(entity)]));
}

/** The user's hooks file of an entity: `src/hooks/order-line.ts`. */
export function hooksPath(entity: EntityModel): string {
  return `src/hooks/${entity.fileName}.ts`;
}

/** Runtime exports a generated validator module may call, by name. */
const RUNTIME_CONVERTERS = new Set([
  'arrayOf',
  'constrained',
  'dictionaryOf',
  'enumConverter',
  'selectConverter',
  'toAny',
  'toB64Image',
  'toBoolean',
  'toDate',
  'toDateTime',
  'toDecimal',
  'toDouble',
  'toGeohashLocation',
  'toInteger',
  'toRefInteger',
  'toRefText',
  'toText',
]);

/** What `definition.ts` prints: the document, the validator, and what they import. */
function definitionView(entity: ServedEntity): object {
  const fields = allFields(entity.fields);
  const types = [entity.typeName, ...entity.objectReaders.map((reader) => reader.typeName)].sort();
  const fieldSets = [
    { name: `${entity.camelName}Fields`, fields: entity.fields.map((field) => field.name) },
    ...entity.objectReaders.map((reader) => ({
      name: reader.fieldSetName,
      fields: reader.fields.map((field) => field.name),
    })),
  ];
  const readerName = `read${entity.typeName}`;
  const scope = new ModuleScope([
    ...types,
    'document',
    ...fieldSets.map((set) => set.name),
    ...entity.constants.map((constant) => constant.name),
    readerName,
    ...entity.objectReaders.map((reader) => reader.functionName),
    `${entity.camelName}Definition`,
  ]);
  /** A converter or factory: a runtime export (imported), else one of the module's constants. */
  const local = (name: string): string => (RUNTIME_CONVERTERS.has(name) ? scope.value(name) : name);
  const keyParts = entity.keyFields.length > 1 ? entity.keyFields : [];
  const rt = {
    EntityDefinition: scope.type('EntityDefinition'),
    EntityDocument: scope.type('EntityDocument'),
    Issue: scope.type('Issue'),
    IssuePath: entity.objectReaders.length > 0 ? scope.type('IssuePath') : '',
    defineEntity: scope.value('defineEntity'),
    readRecordBody: scope.value('readRecordBody'),
    RECORD_ROOT: scope.value('RECORD_ROOT'),
    rejectUnknownFields: scope.value('rejectUnknownFields'),
    toObjectBody: entity.objectReaders.length > 0 ? scope.value('toObjectBody') : '',
    checkKeyPart: keyParts.length > 0 ? scope.value('checkKeyPart') : '',
  };
  const missing = fields.some((field) => field.required) ? scope.value('missing') : '';
  const fieldView = (field: FieldModel): object => ({
    ...field,
    converter: local(field.converter),
    missing,
    recordMember: field.variable === field.name ? field.name : `${field.name}: ${field.variable}`,
  });
  const constants = entity.constants.map((constant) => ({
    name: constant.name,
    factory: scope.value(constant.factory),
    argument:
      (typeof constant.argument === 'string'
        ? local(constant.argument)
        : JSON.stringify(constant.argument)) +
      (constant.extra ?? []).map((value) => `, ${JSON.stringify(value)}`).join(''),
  }));
  const view = {
    name: entity.name,
    typeName: entity.typeName,
    camelName: entity.camelName,
    readerName,
    recordFieldSet: `${entity.camelName}Fields`,
    lkSeparator: entity.lkSeparator,
    document: entity.document,
    integerKeyed: entity.integerKeyed,
    rt,
    typeImports: types.join(', '),
    fieldSets,
    constants,
    fields: entity.fields.map(fieldView),
    requiredVariables: requiredVariables(entity.fields),
    keyParts,
    objectReaders: entity.objectReaders.map((reader) => ({
      ...reader,
      fields: reader.fields.map(fieldView),
      requiredVariables: requiredVariables(reader.fields),
    })),
  };
  // Last: every runtime name the module uses has been asked for.
  return { ...view, runtimeImports: scope.specifiers().join(', ') };
}

function requiredVariables(fields: readonly FieldModel[]): string[] {
  return fields.filter((field) => field.required).map((field) => field.variable);
}

/** What `routes.ts` prints: the REST configuration, the access rules and the route table. */
function routesView(entity: ServedEntity): object {
  const scope = new ModuleScope([
    entity.typeName,
    'hooks',
    'definition',
    `${entity.camelName}RestConfig`,
    `${entity.camelName}Access`,
    `create${entity.typeName}Router`,
    `${entity.camelName}Routes`,
  ]);
  const rt = {
    // A router with no route (every method switched off) does not use the data context.
    DataContext: entity.routes.length > 0 ? scope.type('DataContext') : '',
    DataRoutes: scope.type('DataRoutes'),
    EntityRouter: scope.type('EntityRouter'),
    RestConfig: scope.type('RestConfig'),
    AccessRules: entity.access === undefined ? '' : scope.type('AccessRules'),
    entityRouter: scope.value('entityRouter'),
    recordId: entity.routes.some((route) => route.takesId) ? scope.value('recordId') : '',
  };
  const routes = entity.routes.map((route) => ({
    ...route,
    operation: scope.value(route.operation),
    routerMethod: route.method.toLowerCase(),
  }));
  return {
    ...entity,
    rt,
    runtimeImports: scope.specifiers().join(', '),
    accessRules:
      entity.access === undefined
        ? undefined
        : {
            ...entity.access.methods,
            ...(entity.access.owner === undefined ? {} : { owner: entity.access.owner }),
          },
    routes,
  };
}

/**
 * The starter hooks file the generator wrote for `entity`, as the templates emit it (before
 * formatting): to recognise, once the entity is gone, a hooks file nobody edited.
 */
export function starterHooksFile(entity: EntityModel): { path: string; contents: string } {
  return { path: hooksPath(entity), contents: loadTemplates().hooks(hooksView(entity)) };
}

/** What the starter hooks file prints: the entity, and the runtime's `EntityHooks` type. */
function hooksView(entity: EntityModel): object {
  const scope = new ModuleScope([entity.typeName, `${entity.camelName}Hooks`]);
  const entityHooks = scope.type('EntityHooks');
  // `import type { … }` already says they are types.
  const runtimeImports = scope.specifiers().map((specifier) => specifier.replace(/^type /, ''));
  return { ...entity, entityHooks, runtimeImports: runtimeImports.join(', ') };
}

/** What an entity's `client.ts` prints: its filter and order types, and its accessor. */
function entityClientView(entity: ServedEntity): object {
  const own = ['', 'Input', 'Patch', 'Where', 'Order', 'Accessor', 'BatchAccessor', 'Expansions']
    .map((suffix) => `${entity.typeName}${suffix}`)
    .concat(`${entity.camelName}Accessor`, `${entity.camelName}BatchAccessor`);
  // The record types of the entities its references name (`expand`), imported from their folders;
  // a name the module already uses gets another local one.
  const taken = new Set(own);
  const refImports: { specifier: string; fileName: string }[] = [];
  const local = new Map<string, string>([[entity.name.toUpperCase(), entity.typeName]]);
  const expansions = entity.fields.flatMap((field) => {
    const type = field.type === 'ARRAY' ? field.element : field;
    if (type?.type !== 'ENTITY_REF' || type.refEntity === undefined) return [];
    const target = type.refEntity;
    let name = local.get(target.toUpperCase());
    if (name === undefined) {
      const typeName = pascalCase(target);
      name = typeName;
      for (let n = 2; taken.has(name); n++) name = `${typeName}Record${n === 2 ? '' : n}`;
      taken.add(name);
      local.set(target.toUpperCase(), name);
      refImports.push({
        specifier: name === typeName ? typeName : `${typeName} as ${name}`,
        fileName: kebabCase(target),
      });
    }
    const key = /^[A-Za-z_$][\w$]*$/.test(field.name) ? field.name : `'${field.name}'`;
    return [{ key, type: field.type === 'ARRAY' ? `(${name} | null)[]` : `${name} | null` }];
  });
  const scope = new ModuleScope(taken);
  const where = entity.filterable.map((filter) => {
    const type = filterType(filter.type);
    const generic = type.indexOf('<');
    const name = generic < 0 ? type : type.slice(0, generic);
    return {
      key: /^[A-Za-z_$][\w$]*$/.test(filter.path) ? filter.path : `'${filter.path}'`,
      type: `${scope.type(name)}${generic < 0 ? '' : type.slice(generic)}`,
    };
  });
  const softDelete = entity.table.softDelete === true;
  const history = entity.table.history === true;
  const rt = {
    EntityAccessor: scope.type('EntityAccessor'),
    entityAccessor: scope.value('entityAccessor'),
    BatchAccessor: scope.type('BatchAccessor'),
    batchAccessor: scope.value('batchAccessor'),
    Transport: scope.type('Transport'),
    // An entity with softDelete also restores and purges (SPEC §13).
    SoftDeleteAccessor: softDelete ? scope.type('SoftDeleteAccessor') : '',
    softDeleteAccessor: softDelete ? scope.value('softDeleteAccessor') : '',
    // An entity with history also lists the kept versions of a record (SPEC §13).
    HistoryAccessor: history ? scope.type('HistoryAccessor') : '',
    historyAccessor: history ? scope.value('historyAccessor') : '',
  };
  return {
    ...entity,
    rt,
    softDelete,
    history,
    mixins: softDelete || history,
    refImports,
    expansions,
    where,
    order:
      entity.sortable.length === 0
        ? 'never'
        : entity.sortable.flatMap((name) => [`'${name}'`, `'-${name}'`]).join(' | '),
    runtimeImports: scope.specifiers().join(', '),
  };
}

/** The filter type of a field: which operators it takes, and its values' type. */
function filterType(model: TypeModel): string {
  if (model.type === 'ARRAY' && model.element !== undefined)
    return `MembershipFilter<${filterValueType(model.element)}>`;
  switch (model.type) {
    case 'BOOL':
      return 'EqualityFilter<boolean>';
    case 'STRING':
    case 'ENUM':
    case 'SELECT':
      return model.values === undefined ? 'TextFilter' : `TextFilter<${filterValueType(model)}>`;
    case 'ENTITY_REF':
      return model.converter === 'toRefInteger' ? 'OrderedFilter<number>' : 'TextFilter';
    default:
      return `OrderedFilter<${filterValueType(model)}>`;
  }
}

/** The type of a filter's values. */
function filterValueType(model: TypeModel): string {
  if (model.values !== undefined)
    return model.values.map((value) => JSON.stringify(value)).join(' | ');
  switch (model.type) {
    case 'INTEGER':
    case 'DOUBLE':
      return 'number';
    case 'DECIMAL':
      return 'string | number';
    case 'BOOL':
      return 'boolean';
    case 'ENTITY_REF':
      return model.converter === 'toRefInteger' ? 'number' : 'string';
    default:
      return 'string';
  }
}

/** Every field, nested ones included. */
function allFields(fields: readonly FieldModel[]): FieldModel[] {
  return fields.flatMap((field) => [field, ...allFields(nestedFields(field))]);
}

function nestedFields(model: TypeModel): readonly FieldModel[] {
  return [
    ...(model.fields ?? []),
    ...(model.element === undefined ? [] : nestedFields(model.element)),
  ];
}

/** Roles every principal has or that need none: not worth putting into an example token. */
const IMPLICIT_ROLES: readonly string[] = ['public', 'authenticated'];

/**
 * The access section of the README: the access file as written, roles per entity and method (as
 * code), and what its token example uses: a role the file names (preferably one that creates
 * records) and an entity to list (preferably one with an owner rule that needs credentials).
 */
function readmeAccessView(model: ServiceModel, file: string, text: string): object {
  const roles = (list: readonly string[] | undefined): string =>
    list === undefined || list.length === 0
      ? 'nobody'
      : list.map((role) => `\`${role}\``).join(', ');
  const entities = model.entities.map((entity) => ({
    name: entity.name,
    GET_LIST: roles(entity.access?.methods.GET_LIST),
    GET_BYID: roles(entity.access?.methods.GET_BYID),
    NEW: roles(entity.access?.methods.NEW),
    UPDATE: roles(entity.access?.methods.UPDATE),
    DELETE: roles(entity.access?.methods.DELETE),
    owner: entity.access?.owner === undefined ? '' : `\`${entity.access.owner}\``,
  }));
  // The token matters most where listing needs credentials, and shows the owner rule if any.
  const needsToken = (entity: ServedEntity): boolean =>
    !(entity.access?.methods.GET_LIST ?? []).includes('public');
  const owned = (entity: ServedEntity): boolean => entity.access?.owner !== undefined;
  const example =
    model.entities.find((entity) => owned(entity) && needsToken(entity)) ??
    model.entities.find(owned) ??
    model.entities.find(needsToken) ??
    model.entities[0];
  // A role other than admin (which the owner rule does not restrict), and only a plain name: it
  // goes into the shell command of the example.
  const named = (methods: readonly (readonly string[])[], admin: boolean): string | undefined =>
    methods
      .flat()
      .find(
        (role) =>
          !IMPLICIT_ROLES.includes(role) && (admin || role !== 'admin') && /^[\w.:-]+$/.test(role),
      );
  const rules = model.entities.flatMap((entity) =>
    entity.access === undefined ? [] : [entity.access],
  );
  const news = rules.map((rule) => rule.methods.NEW);
  const all = rules.flatMap((rule) => Object.values(rule.methods));
  const role = named(news, false) ?? named(all, false) ?? named(all, true);
  const trimmed = text.trimEnd();
  return {
    file,
    // Longer than any backtick run in the file, so the file cannot end the code block.
    fence: '`'.repeat(Math.max(3, ...[...trimmed.matchAll(/`+/g)].map((run) => run[0].length + 1))),
    language: /\.json$/i.test(file) ? 'json' : 'yaml',
    text: trimmed,
    entities,
    example: example?.pathName ?? '',
    exampleName: example?.name ?? '',
    exampleNeedsToken: example !== undefined && needsToken(example),
    hasOwner: model.entities.some(owned),
    hasSingleRecord: model.entities.some((entity) => entity.singleRecord),
    tokenRole: role ?? '',
    tokenRoles: role === undefined ? '[]' : `['${role}']`,
  };
}

function readmeEntityView(entity: ServedEntity): object {
  const keys = entity.keyFields.map((field) => `\`${field.name}\``);
  return {
    ...entity,
    displayName: entity.displayName,
    description: entity.description,
    idSentence: entity.singleRecord
      ? `Its one record has the id \`${entity.lkValue ?? ''}\`.`
      : keys.length === 1
        ? `A record's id is its ${keys[0] ?? ''}.`
        : `A record's id is ${keys.join(', ')} joined by \`${entity.lkSeparator}\`.`,
    routes: entity.routes.map((route) => ({
      ...route,
      capitalizedSummary: route.summary.charAt(0).toUpperCase() + route.summary.slice(1),
    })),
    fields: entity.fields.map((field) => ({ ...field, typeLabel: typeLabel(field) })),
  };
}

function typeLabel(model: TypeModel | FieldModel): string {
  switch (model.type) {
    case 'ENUM':
    case 'SELECT':
      return `${model.type} (${(model.values ?? []).join(', ')})`;
    case 'ARRAY':
      return model.element === undefined ? 'ARRAY' : `ARRAY of ${typeLabel(model.element)}`;
    case 'ENTITY_REF':
      return `ENTITY_REF to ${model.refEntity ?? '?'}`;
    default:
      return model.type;
  }
}

/** `out/shop-service` → `shop-service`. */
function serviceTitle(outputDir: string): string {
  const base = outputDir.replace(/\\/g, '/').replace(/\/+$/, '').split('/').pop() ?? '';
  return base === '' || base === '.' ? 'entity service' : base;
}

/** An npm package name derived from the output folder. */
function packageName(outputDir: string): string {
  const name = serviceTitle(outputDir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+/, '');
  return name === '' ? 'entity-service' : name;
}
