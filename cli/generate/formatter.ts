/**
 * One Biome formatter (its JS API over the WebAssembly build), configured with FORMAT_OPTIONS.
 * Loading it takes a few hundred milliseconds, so the format step does so only when a file needs
 * formatting.
 */
import { Biome, Distribution } from '@biomejs/js-api';
import { FORMAT_OPTIONS } from './format.js';

/** Formats the text of one TypeScript file; throws on a syntax error (a generator bug). */
export type FormatOne = (path: string, contents: string) => string;

export async function createFormatter(): Promise<FormatOne> {
  const biome = await Biome.create({ distribution: Distribution.NODE });
  const { projectKey } = biome.openProject('/');
  biome.applyConfiguration(projectKey, FORMAT_OPTIONS);
  return (path, contents) => {
    const result = biome.formatContent(projectKey, contents, { filePath: path });
    const errors = result.diagnostics.filter((diagnostic) => diagnostic.severity === 'error');
    if (errors.length > 0)
      throw new Error(
        `entity-gen emitted ${path} with a syntax error (a bug; please report it): ${errors
          .map((diagnostic) => JSON.stringify(diagnostic.message))
          .join('; ')}`,
      );
    return result.content;
  };
}
