import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type HandlebarsPackage from 'handlebars';
import { packageRoot } from './paths.js';

/** The width generated code is laid out to (the formatter's, which does not wrap comments). */
const LINE_WIDTH = 100;

/**
 * A doc comment of `text`, wrapped to the line width at `indent` spaces: on one line when it
 * fits, else one ` * ` line per wrapped line. Blank lines in `text` separate paragraphs; other
 * line breaks are spaces.
 */
export function docComment(text: string, indent = 0): string {
  const pad = ' '.repeat(indent);
  const paragraphs = text
    .replace(/\*\//g, '*\\/')
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.split(/\s+/).filter((word) => word !== ''))
    .filter((words) => words.length > 0);
  const single = paragraphs.length === 1 ? `${pad}/** ${paragraphs[0]!.join(' ')} */` : undefined;
  if (single !== undefined && single.length <= LINE_WIDTH) return single;
  const width = LINE_WIDTH - indent - 3;
  const lines: string[] = [];
  for (const [index, words] of paragraphs.entries()) {
    if (index > 0) lines.push(`${pad} *`);
    let line = '';
    for (const word of words) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(`${pad} * ${line}`);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(`${pad} * ${line}`);
  }
  return [`${pad}/**`, ...lines, `${pad} */`].join('\n');
}

/** Template helpers; templates only loop, test booleans and print, so this list stays short. */
export const templateHelpers = {
  /** Prints a value as a JSON (and so TypeScript) literal. */
  json: (value: unknown): string => JSON.stringify(value),
  /**
   * `{{#doc}}…{{/doc}}` (each tag on a line of its own), `{{#doc indent=2}}…{{/doc}}`: the block
   * as a wrapped doc comment, on the lines of the block.
   */
  doc(this: unknown, options: Handlebars.HelperOptions): string {
    const indent = typeof options.hash['indent'] === 'number' ? options.hash['indent'] : 0;
    return `${docComment(options.fn(this), indent)}\n`;
  },
};

/** A compiled template: view model in, text out. */
export type Template = (view: object) => string;

/** The templates of the generator, compiled once per process. */
export interface Templates {
  readonly entityDefinition: Template;
  readonly entityRoutes: Template;
  readonly entityClient: Template;
  readonly app: Template;
  readonly client: Template;
  readonly service: Template;
  readonly server: Template;
  readonly packageJson: Template;
  readonly tsconfig: Template;
  readonly readme: Template;
  /** The user's starter hooks file of an entity. */
  readonly hooks: Template;
}

/** The names of the templates. */
export type TemplateName = keyof Templates;

/** Where each template is, under `templates/`. */
const TEMPLATE_FILES: Readonly<Record<TemplateName, string>> = {
  entityDefinition: 'entity/definition.ts.hbs',
  entityRoutes: 'entity/routes.ts.hbs',
  entityClient: 'entity/client.ts.hbs',
  app: 'service/app.ts.hbs',
  client: 'service/client.ts.hbs',
  service: 'service/service.ts.hbs',
  server: 'service/server.ts.hbs',
  packageJson: 'service/package.json.hbs',
  tsconfig: 'service/tsconfig.json.hbs',
  readme: 'service/README.md.hbs',
  hooks: 'user/hooks.ts.hbs',
};

/** The partials the templates use, by name. */
const PARTIAL_FILES: Readonly<Record<string, string>> = { readField: 'partials/readField.hbs' };

/** The options every template is compiled with (strict: a missing view property is an error). */
const COMPILE_OPTIONS = { noEscape: true, strict: true } as const;

let cached: Templates | undefined;

/**
 * Loads every template: precompiled by the build (`precompiled-templates.cjs` next to this
 * module in `dist/`), or compiled from `templates/*.hbs` when running from the sources.
 */
export function loadTemplates(): Templates {
  if (cached !== undefined) return cached;
  const precompiled = loadPrecompiled();
  const Handlebars = loadHandlebars(precompiled !== undefined);
  const handlebars = Handlebars.create();
  for (const [name, helper] of Object.entries(templateHelpers))
    handlebars.registerHelper(name, helper);
  const dir = join(packageRoot(), 'templates');
  const template = (file: string): HandlebarsPackage.TemplateDelegate => {
    const spec = precompiled?.[file];
    if (spec !== undefined) return handlebars.template(spec);
    const text = readFileSync(join(dir, file), 'utf8');
    return handlebars.compile(
      file.startsWith('partials/') ? text.trimEnd() : text,
      COMPILE_OPTIONS,
    );
  };
  for (const [name, file] of Object.entries(PARTIAL_FILES))
    handlebars.registerPartial(name, template(file));
  const templates: Partial<Record<TemplateName, Template>> = {};
  for (const [name, file] of Object.entries(TEMPLATE_FILES) as [TemplateName, string][]) {
    const compiled = template(file);
    templates[name] = (view) => compiled(view);
  }
  cached = templates as Templates;
  return cached;
}

/**
 * Handlebars: only its runtime for precompiled templates (a third of the whole to load), the
 * whole with its compiler when running from the sources.
 */
function loadHandlebars(runtimeOnly: boolean): typeof HandlebarsPackage {
  const require = createRequire(import.meta.url);
  return require(runtimeOnly ? 'handlebars/runtime.js' : 'handlebars') as typeof HandlebarsPackage;
}

/** What the build precompiled (scripts/precompile-templates.mjs): the templates, by file. */
type Precompiled = Readonly<Record<string, TemplateSpecification>>;

/** The build's precompiled templates; `undefined` when running from the sources. */
function loadPrecompiled(): Precompiled | undefined {
  const file = new URL('./precompiled-templates.cjs', import.meta.url);
  if (!existsSync(file)) return undefined;
  return createRequire(import.meta.url)(fileURLToPath(file)) as Precompiled;
}
