import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { EntityAccess } from '../access/index.js';
import type { EntityModel, FieldModel, SchemaModel, TypeModel } from '../model/types.js';
import type { JsonValue } from '../schema/types.js';
import { DEFAULT_ENTITY_REST_CONFIG, type EntityRestConfig } from '../restconfig/index.js';
import type { EmitOptions } from './options.js';
import { generatorVersion, packageRoot } from './paths.js';
import { loadTemplates, templateHelpers, type Template } from './templates.js';
import {
  arrayLiteral,
  arrowFunction,
  call,
  declaration,
  importDeclaration,
  jsonLiteral,
  objectLiteral,
  printDoc,
  property,
  stringLiteral,
} from './layout/typescript.js';
import { emitEntityTypes } from './types-emitter.js';
import { definitionView, sortImportNames } from './view.js';

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
  readonly contents: string;
  /** Schema files the file was generated from (for its header). */
  readonly sources: readonly string[];
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
  betterSqliteVersion: '^12.4.1',
  pgVersion: '^8.16.3',
  typesNodeVersion: '^20.19.0',
  tsxVersion: '^4.20.0',
  typescriptVersion: '~5.9.3',
};

/**
 * Emits every file of the service from the model: templates, laid out by ./layout. `accessText`
 * is the access file as written, shown in the README.
 */
export function emitService(
  model: SchemaModel,
  options: EmitOptions,
  restConfigs: ReadonlyMap<string, EntityRestConfig> = new Map(),
  access?: ReadonlyMap<string, EntityAccess>,
  accessText?: string,
): EmittedFile[] {
  const restConfigOf = (entity: EntityModel): EntityRestConfig =>
    restConfigs.get(entity.name) ?? DEFAULT_ENTITY_REST_CONFIG;
  const templates = loadTemplates();
  const userTemplates = loadUserTemplates();
  const all = model.sourceFiles;
  const files: EmittedFile[] = [];
  const owner = 'generator';
  for (const entity of model.entities) {
    const dir = `src/entities/${entity.fileName}`;
    const sources = [entity.sourceFile];
    files.push(
      {
        path: `${dir}/types.ts`,
        contents: emitEntityTypes(entity),
        sources,
        owner,
      },
      {
        path: `${dir}/definition.ts`,
        contents: templates.entityDefinition(definitionView(entity)),
        sources,
        owner,
      },
      {
        path: `${dir}/routes.ts`,
        contents: templates.entityRoutes(
          routesView(entity, restConfigOf(entity), access?.get(entity.name)),
        ),
        sources,
        owner,
      },
      {
        path: hooksPath(entity),
        contents: moveLongObjectDown(userTemplates.hooks(entity)),
        sources,
        owner: 'user',
      },
    );
  }
  const title = serviceTitle(options.outputDir);
  const serviceView = { entities: model.entities, ...serviceDeclarations(model, restConfigOf) };
  files.push(
    { path: 'src/app.ts', contents: templates.app({ title }), sources: all, owner },
    { path: 'src/service.ts', contents: templates.service(serviceView), sources: all, owner },
    { path: 'src/server.ts', contents: templates.server({}), sources: all, owner: 'user' },
    { path: 'tsconfig.json', contents: templates.tsconfig({}), sources: all, owner },
    { path: '.gitignore', contents: GITIGNORE, sources: all, owner: 'user' },
    {
      path: 'package.json',
      contents: templates.packageJson({
        headerLine: headerLine(model, all),
        packageName: packageName(options.outputDir),
        description: `REST service for ${model.entities.map((entity) => entity.name).join(', ')}`,
        runtimeSpec: options.runtimeSpec ?? `^${generatorVersion()}`,
        sqlite: (options.driver ?? 'both') !== 'postgres',
        postgres: (options.driver ?? 'both') !== 'sqlite',
        ...SERVICE_DEPENDENCIES,
      }),
      sources: all,
      owner,
    },
    {
      path: 'README.md',
      contents: templates.readme({
        title,
        sourceList: all.map((file) => `\`${file}\``).join(', '),
        entities: model.entities.map(readmeEntityView),
        access:
          access === undefined || options.accessFile === undefined
            ? undefined
            : readmeAccessView(model, access, options.accessFile, accessText ?? ''),
      }),
      sources: all,
      owner,
    },
  );
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The user's hooks file of an entity: `src/hooks/order-line.ts`. */
export function hooksPath(entity: EntityModel): string {
  return `src/hooks/${entity.fileName}.ts`;
}

/** Templates of the user-owned starter files, compiled once per process like the others. */
interface UserTemplates {
  readonly hooks: Template;
}

let userTemplatesCache: UserTemplates | undefined;

function loadUserTemplates(): UserTemplates {
  if (userTemplatesCache !== undefined) return userTemplatesCache;
  const handlebars = Handlebars.create();
  for (const [name, helper] of Object.entries(templateHelpers))
    handlebars.registerHelper(name, helper);
  const compile = (file: string): Template => {
    const text = readFileSync(join(packageRoot(), 'templates', file), 'utf8');
    const template = handlebars.compile(text, { noEscape: true, strict: true });
    return (view) => template(view);
  };
  userTemplatesCache = { hooks: compile('user/hooks.ts.hbs') };
  return userTemplatesCache;
}

/**
 * Prettier's layout for an `export const name: Type = {` line wider than 100 columns (very long
 * entity names): the object literal moves to the next line, indented.
 */
function moveLongObjectDown(text: string): string {
  const lines = text.split('\n');
  const head = lines.findIndex((line) => line.startsWith('export const ') && line.endsWith(' = {'));
  const end = lines.indexOf('};', head);
  if (head < 0 || end < 0 || (lines[head] as string).length <= 100) return text;
  const inner = lines.slice(head + 1, end).map((line) => (line === '' ? '' : `  ${line}`));
  return [
    ...lines.slice(0, head),
    (lines[head] as string).slice(0, -2),
    '  {',
    ...inner,
    '  };',
    ...lines.slice(end + 1),
  ].join('\n');
}

/** The first header line every generated file carries. */
export function headerLine(model: SchemaModel, sources: readonly string[]): string {
  return `Code generated by entity-gen from ${sources.join(', ')} (schema ${model.shortHash}). DO NOT EDIT.`;
}

/** A route handler of routes.ts: the runtime operation it calls, or `forbidden`. */
interface HandlerSpec {
  readonly member: 'list' | 'count' | 'insert' | 'get' | 'replace' | 'patch' | 'remove';
  readonly method: string;
  readonly operation: string;
  readonly params: string;
  readonly extra: readonly string[];
}

const HANDLERS: readonly HandlerSpec[] = [
  {
    member: 'list',
    method: 'GET_LIST',
    operation: 'listRecords',
    params: '(ctx, data)',
    extra: ['restConfig'],
  },
  {
    member: 'count',
    method: 'GET_LIST',
    operation: 'countRecords',
    params: '(ctx, data)',
    extra: ['restConfig'],
  },
  {
    member: 'insert',
    method: 'NEW',
    operation: 'insertRecords',
    params: '(ctx, data)',
    extra: ['hooks'],
  },
  {
    member: 'get',
    method: 'GET_BYID',
    operation: 'getRecord',
    params: '(ctx, data, id)',
    extra: ['id'],
  },
  {
    member: 'replace',
    method: 'UPDATE',
    operation: 'replaceRecord',
    params: '(ctx, data, id)',
    extra: ['id', 'hooks'],
  },
  {
    member: 'patch',
    method: 'UPDATE',
    operation: 'patchRecord',
    params: '(ctx, data, id)',
    extra: ['id', 'hooks'],
  },
  {
    member: 'remove',
    method: 'DELETE',
    operation: 'deleteRecord',
    params: '(ctx, data, id)',
    extra: ['id', 'hooks'],
  },
];

/** What the routes template reads: the handlers the REST configuration allows, laid out. */
function routesView(
  entity: EntityModel,
  config: EntityRestConfig,
  access: EntityAccess | undefined,
): object {
  const allowed = new Set<string>(config.allowedMethods);
  const restConfigName = `${entity.camelName}RestConfig`;
  const imports = new Set(['type DataRoutes', 'type RestConfig']);
  if (access !== undefined) imports.add('type AccessRules');
  const handlers: Record<string, string> = {};
  for (const spec of HANDLERS) {
    const handler = allowed.has(spec.method)
      ? arrowFunction(
          spec.params,
          call(spec.operation, [
            'ctx',
            'data',
            'definition',
            ...spec.extra.map((name) => (name === 'restConfig' ? restConfigName : name)),
          ]),
          'expression',
        )
      : call('forbidden', ['definition', stringLiteral(spec.method)]);
    imports.add(allowed.has(spec.method) ? spec.operation : 'forbidden');
    handlers[spec.member] = printDoc([property(spec.member, handler), ','], { column: 2 });
  }
  const runtimeImports = sortImportNames([...imports]);
  return {
    ...entity,
    runtimeImport: printDoc(importDeclaration(runtimeImports, '@entity-gen/runtime')),
    hooksImport: printDoc(
      importDeclaration([`${entity.camelName}Hooks as hooks`], `../../hooks/${entity.fileName}.js`),
    ),
    restConfigDeclaration: printDoc(
      declaration(
        `export const ${restConfigName}: RestConfig`,
        jsonLiteral(config as unknown as JsonValue),
      ),
    ),
    accessDeclaration:
      access === undefined
        ? undefined
        : printDoc(
            declaration(
              `export const ${entity.camelName}Access: AccessRules`,
              jsonLiteral({
                ...access.methods,
                ...(access.owner === undefined ? {} : { owner: access.owner }),
              }),
            ),
          ),
    ownerField: access?.owner,
    handlers,
  };
}

/** What the service template reads: every entity's tables, routes, schema and REST config. */
function serviceDeclarations(
  model: SchemaModel,
  restConfigOf: (entity: EntityModel) => EntityRestConfig,
): { tablesDeclaration: string; serviceDeclaration: string } {
  const entities = model.entities;
  const tables = declaration(
    'export const tables: readonly TableDescriptor[]',
    arrayLiteral(entities.map((entity) => `${entity.camelName}Table`)),
  );
  const service = declaration(
    'export const service: ServiceDefinition',
    objectLiteral([
      property('schemaHash', stringLiteral(model.hash), 'string'),
      property('routes', arrayLiteral(entities.map((entity) => `${entity.camelName}Routes`))),
      property(
        'entities',
        objectLiteral(
          entities.map((entity) =>
            property(
              entity.name,
              objectLiteral([
                property('schema', jsonLiteral(entity.document)),
                property('restConfig', jsonLiteral(restConfigOf(entity) as unknown as JsonValue)),
              ]),
            ),
          ),
        ),
      ),
    ]),
  );
  return { tablesDeclaration: printDoc(tables), serviceDeclaration: printDoc(service) };
}

/** Roles every principal has or that need none: not worth putting into an example token. */
const IMPLICIT_ROLES: readonly string[] = ['public', 'authenticated'];

/**
 * The access section of the README: the access file as written, roles per entity and method (as
 * code), and what its token example uses: a role the file names (preferably one that creates
 * records) and an entity to list (preferably one with an owner rule that needs credentials).
 */
function readmeAccessView(
  model: SchemaModel,
  access: ReadonlyMap<string, EntityAccess>,
  file: string,
  text: string,
): object {
  const roles = (list: readonly string[]): string =>
    list.length === 0 ? 'nobody' : list.map((role) => `\`${role}\``).join(', ');
  const entities = model.entities.map((entity) => {
    const rules = access.get(entity.name);
    return {
      name: entity.name,
      GET_LIST: roles(rules?.methods.GET_LIST ?? []),
      GET_BYID: roles(rules?.methods.GET_BYID ?? []),
      NEW: roles(rules?.methods.NEW ?? []),
      UPDATE: roles(rules?.methods.UPDATE ?? []),
      DELETE: roles(rules?.methods.DELETE ?? []),
      owner: rules?.owner === undefined ? '' : `\`${rules.owner}\``,
    };
  });
  // The token matters most where listing needs credentials, and shows the owner rule if any.
  const needsToken = (entity: EntityModel): boolean =>
    !(access.get(entity.name)?.methods.GET_LIST ?? []).includes('public');
  const owned = (entity: EntityModel): boolean => access.get(entity.name)?.owner !== undefined;
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
  const news = [...access.values()].map((rule) => rule.methods.NEW);
  const all = [...access.values()].flatMap((rule) => Object.values(rule.methods));
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

function readmeEntityView(entity: EntityModel): object {
  return {
    ...entity,
    displayName: entity.displayName,
    description: entity.description,
    lkValue: entity.lkValue,
    idDescription:
      entity.lk.length === 1
        ? `\`${entity.lk[0]}\``
        : `${entity.lk.map((name) => `\`${name}\``).join(` ${JSON.stringify(entity.lkSeparator)} `)}`,
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
