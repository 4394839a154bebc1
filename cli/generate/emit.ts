import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import type { EntityModel, FieldModel, SchemaModel, TypeModel } from '../model/types.js';
import { DEFAULT_ENTITY_REST_CONFIG, type EntityRestConfig } from '../restconfig/index.js';
import { regenerateCommand, type EmitOptions } from './options.js';
import { generatorVersion, packageRoot } from './paths.js';
import { loadTemplates, templateHelpers, type Template } from './templates.js';
import { emitEntityTypes } from './types-emitter.js';
import { definitionView } from './view.js';

export {
  DRIVER_CHOICES,
  regenerateCommand,
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

/** Versions written into the generated package.json; kept in one place. */
const SERVICE_DEPENDENCIES = {
  betterSqliteVersion: '^12.4.1',
  pgVersion: '^8.16.3',
  typesNodeVersion: '^20.19.0',
  tsxVersion: '^4.20.0',
  typescriptVersion: '~5.9.3',
};

/** Emits every file of the service from the model: templates and json-schema-to-typescript. */
export async function emitService(
  model: SchemaModel,
  options: EmitOptions,
  restConfigs: ReadonlyMap<string, EntityRestConfig> = new Map(),
): Promise<EmittedFile[]> {
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
        contents: await emitEntityTypes(entity),
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
        contents: templates.entityRoutes(routesView(entity, restConfigOf(entity))),
        sources,
        owner,
      },
      {
        path: hooksPath(entity),
        contents: userTemplates.hooks(entity),
        sources,
        owner: 'user',
      },
    );
  }
  const title = serviceTitle(options.outputDir);
  const serviceView = {
    title,
    schemaHash: model.hash,
    entities: model.entities.map((entity) => ({
      ...entity,
      documentJson: JSON.stringify(entity.document),
      restConfigJson: JSON.stringify(restConfigOf(entity)),
    })),
  };
  files.push(
    { path: 'src/app.ts', contents: templates.app({ title }), sources: all, owner },
    { path: 'src/service.ts', contents: templates.service(serviceView), sources: all, owner },
    { path: 'src/server.ts', contents: templates.server({}), sources: all, owner: 'user' },
    { path: 'tsconfig.json', contents: templates.tsconfig({}), sources: all, owner },
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
        command: regenerateCommand(options),
        entities: model.entities.map(readmeEntityView),
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

/** The first header line every generated file carries. */
export function headerLine(model: SchemaModel, sources: readonly string[]): string {
  return `Code generated by entity-gen from ${sources.join(', ')} (schema ${model.shortHash}). DO NOT EDIT.`;
}

/** What the routes template reads: which operations the REST configuration allows. */
function routesView(entity: EntityModel, config: EntityRestConfig): object {
  const allowed = new Set<string>(config.allowedMethods);
  const view = {
    ...entity,
    restConfigJson: JSON.stringify(config),
    allowList: allowed.has('GET_LIST'),
    allowInsert: allowed.has('NEW'),
    allowGet: allowed.has('GET_BYID'),
    allowUpdate: allowed.has('UPDATE'),
    allowDelete: allowed.has('DELETE'),
  };
  return { ...view, anyForbidden: allowed.size < 5 };
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
