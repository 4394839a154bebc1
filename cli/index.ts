/**
 * @entity-gen/cli as a library: the generator as a pure function, the plan of a generation
 * against an output folder, and the command line itself. The `entity-gen` command is `main`.
 */
export { generate, type GenerateResult, type GeneratedFile } from './generate/index.js';
export type { DriverChoice, EmitOptions, FileOwner } from './generate/index.js';
export { prepareGeneration, type GenerationRequest } from './run/prepare.js';
export { planChanges, planOutput, type Plan, type PlannedFile } from './plan/index.js';
export { formatDiagnostic, type Diagnostic } from './diagnostics.js';
export { createProgram, main, type ProgramContext } from './program.js';
