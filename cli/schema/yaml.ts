/**
 * The `yaml` package, loaded on first use. Only the exact parse needs it (source positions for
 * diagnostics, YAML features the quick parse leaves to it); a schema that loads cleanly never
 * does, and a generation is spared the time it takes to load.
 */
import { createRequire } from 'node:module';

type YamlPackage = typeof import('yaml');

let loaded: YamlPackage | undefined;

export function yamlPackage(): YamlPackage {
  // Its CommonJS build, which can be loaded synchronously (the parse is synchronous).
  loaded ??= createRequire(import.meta.url)('yaml') as YamlPackage;
  return loaded;
}
