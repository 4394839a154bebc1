import * as nodeModule from 'node:module';

/** `module.enableCompileCache` of Node.js 22.1 and later (Node 20 and its types have none). */
type EnableCompileCache = (directory?: string) => unknown;

/**
 * Turns on Node's on-disk compile cache for the modules this thread loads from now on, where the
 * running Node.js has one (22.1 and later; on Node 20 nothing happens): the CLI loads a few
 * megabytes of JavaScript (TypeScript's compiler through ts-morph, json-schema-to-typescript), and
 * a cached compilation makes every later start-up faster. The cache is Node's default folder,
 * `node-compile-cache` in the OS temporary directory, or the folder `NODE_COMPILE_CACHE` names;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off. A cache Node cannot use only costs the time it
 * would have saved: Node reports that in the status it returns, which is not an error here.
 */
export function enableCompileCache(): void {
  const enable = (nodeModule as unknown as { enableCompileCache?: EnableCompileCache })
    .enableCompileCache;
  if (typeof enable === 'function') enable();
}
