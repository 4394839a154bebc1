#!/usr/bin/env node
/**
 * The `entity-gen` executable: runs the command line (program.ts) with the process's arguments and
 * environment and exits with its code.
 */
import { enableCompileCache } from './compile-cache.js';

// Before the program and its dependencies load (hence the dynamic import): see compile-cache.ts.
enableCompileCache();
const { main } = await import('./program.js');
process.exitCode = await main(process.argv.slice(2), process.env);
