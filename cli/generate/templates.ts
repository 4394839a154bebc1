import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
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
  readonly entityTypes: Template;
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
  handlebars.registerPartial('readField', read('partials/readField.hbs').trimEnd());
  const compile = (file: string): Template => {
    const template = handlebars.compile(read(file), { noEscape: true, strict: true });
    return (view) => template(view);
  };
  cached = {
    entityTypes: compile('entity/types.ts.hbs'),
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
