import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { packageRoot } from './paths.js';

/** Template helpers; templates only loop, test booleans and print, so this list stays short. */
export const templateHelpers = {
  /** Prints a value as a JSON (and so TypeScript) literal. */
  json: (value: unknown): string => JSON.stringify(value),
};

/** A compiled template: view model in, text out. */
export type Template = (view: object) => string;

/** The templates of the generator, compiled once per process. */
export interface Templates {
  readonly entityDefinition: Template;
  readonly entityRoutes: Template;
  readonly app: Template;
  readonly service: Template;
  readonly server: Template;
  readonly packageJson: Template;
  readonly tsconfig: Template;
  readonly readme: Template;
}

let cached: Templates | undefined;

/** Loads and compiles every template (strict: a missing view property is an error, not ""). */
export function loadTemplates(): Templates {
  if (cached !== undefined) return cached;
  const handlebars = Handlebars.create();
  for (const [name, helper] of Object.entries(templateHelpers))
    handlebars.registerHelper(name, helper);
  const dir = join(packageRoot(), 'templates');
  const read = (file: string): string => readFileSync(join(dir, file), 'utf8');
  const compile = (file: string): Template => {
    const template = handlebars.compile(read(file), { noEscape: true, strict: true });
    return (view) => template(view);
  };
  cached = {
    entityDefinition: compile('entity/definition.ts.hbs'),
    entityRoutes: compile('entity/routes.ts.hbs'),
    app: compile('service/app.ts.hbs'),
    service: compile('service/service.ts.hbs'),
    server: compile('service/server.ts.hbs'),
    packageJson: compile('service/package.json.hbs'),
    tsconfig: compile('service/tsconfig.json.hbs'),
    readme: compile('service/README.md.hbs'),
  };
  return cached;
}
