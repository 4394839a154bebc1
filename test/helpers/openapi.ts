/**
 * Checks responses against a generated service's OpenAPI document: the status must be one the
 * operation documents and the body must match its schema (Ajv, JSON Schema 2020-12). The
 * end-to-end suites' HTTP client runs every response through it (test/helpers/service.ts), so a
 * route or a body the document does not describe fails the suite that meets it.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonResponse } from './http.js';

type Json = Record<string, unknown>;

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A path template of the document as a pattern; `{id}` of a record takes the rest of the path. */
interface PathPattern {
  readonly template: string;
  readonly pattern: RegExp;
  /** Fixed segments count; a more specific template wins. */
  readonly fixed: number;
}

function patternOf(template: string): PathPattern {
  const segments = template.split('/').slice(1);
  const source = segments
    .map((segment, index) => {
      if (!segment.startsWith('{')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      // A record id is the rest of the path (it may hold `/`); other parameters one segment.
      return index === segments.length - 1 && segment === '{id}' ? '.+' : '[^/]+';
    })
    .join('/');
  return {
    template,
    // Entity names match in any case; a trailing slash is accepted.
    pattern: new RegExp(`^/${source}/?$`, 'i'),
    fixed: segments.filter((segment) => !segment.startsWith('{')).length,
  };
}

/** Checks one response; returns what is wrong with it, or nothing. */
export type ResponseCheck = (method: string, path: string, response: JsonResponse) => string[];

/** A check of responses against `document`. */
export function responseChecker(document: Json): ResponseCheck {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi' });
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (pointer: string): ValidateFunction => {
    let validate = compiled.get(pointer);
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `openapi#${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const paths = isObject(document['paths']) ? document['paths'] : {};
  const patterns = Object.keys(paths)
    .map(patternOf)
    .sort((a, b) => b.fixed - a.fixed);
  const components = isObject(document['components']) ? document['components'] : {};
  const responses = isObject(components['responses']) ? components['responses'] : {};
  /** A response object and the JSON pointer of its JSON schema, resolving `$ref`. */
  const resolve = (response: Json, pointer: string): { response: Json; pointer: string } => {
    const target = response['$ref'];
    if (typeof target === 'string' && target.startsWith('#/components/responses/')) {
      const name = target.slice('#/components/responses/'.length);
      const found = responses[name];
      if (!isObject(found)) throw new Error(`the document has no response ${name}`);
      return { response: found, pointer: `/components/responses/${pointerSegment(name)}` };
    }
    return { response, pointer };
  };

  return (method, fullPath, response) => {
    const path = fullPath.split('?')[0] ?? '';
    const problems: string[] = [];
    const where = `${method} ${path} → ${response.status}`;
    const match = patterns.find((candidate) => candidate.pattern.test(path));
    const item = match === undefined ? undefined : paths[match.template];
    // HEAD is GET without the body (the document says so once, not per path).
    const verb = method.toUpperCase() === 'HEAD' ? 'get' : method.toLowerCase();
    const operation = isObject(item) ? item[verb] : undefined;
    let documented: { response: Json; pointer: string } | undefined;
    if (method.toUpperCase() === 'OPTIONS') {
      // Every path answers OPTIONS with its methods (none, for a path all switched off).
      const allowed = [200, 401, 404];
      if (!allowed.includes(response.status))
        problems.push(`${where}: OPTIONS answers one of ${allowed.join(', ')}`);
      documented = resolve(
        { $ref: `#/components/responses/${response.status === 200 ? 'Allow' : 'Error'}` },
        '',
      );
    } else if (match === undefined || !isObject(operation)) {
      // A path or method the document does not list: 404 (no such path), 405 (no such method),
      // or 403 (the REST configuration switched it off) — the error envelope.
      const allowed = [403, 404, 405];
      if (!allowed.includes(response.status))
        problems.push(`${where}: undocumented, and not one of ${allowed.join(', ')}`);
      documented = resolve({ $ref: '#/components/responses/Error' }, '');
    } else {
      const operationPointer = `/paths/${pointerSegment(match.template)}/${verb}`;
      const statuses = isObject(operation['responses']) ? operation['responses'] : {};
      const status = String(response.status);
      const entry = statuses[status] ?? statuses['default'];
      if (!isObject(entry)) {
        problems.push(
          `${where}: status not documented (documented: ${Object.keys(statuses).join(', ')})`,
        );
        return problems;
      }
      documented = resolve(
        entry,
        `${operationPointer}/responses/${statuses[status] === undefined ? 'default' : status}`,
      );
    }
    const noBody = method.toUpperCase() === 'HEAD' || response.status === 304;
    if (noBody) {
      if (response.text !== '') problems.push(`${where}: a body where none belongs`);
      return problems;
    }
    const content = isObject(documented.response['content']) ? documented.response['content'] : {};
    const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (!Object.hasOwn(content, type)) {
      problems.push(`${where}: content type ${type || '(none)'} not documented`);
      return problems;
    }
    if (type !== 'application/json') return problems;
    const schema = isObject(content[type]) ? content[type]['schema'] : undefined;
    if (schema === undefined) return problems;
    const validate = validatorAt(`${documented.pointer}/content/${pointerSegment(type)}/schema`);
    if (!validate(response.body)) {
      problems.push(
        `${where}: body does not match the document: ${ajv.errorsText(validate.errors, { dataVar: 'body' })}\n${response.text.slice(0, 500)}`,
      );
    }
    return problems;
  };
}

/** A JSON pointer segment. */
function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
