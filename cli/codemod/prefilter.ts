/**
 * Which user files a rename can touch, told from their text alone: every place the rewrite changes
 * spells an old name (a renamed property or type, the hooks constant) or names a moved module (its
 * path holds the entity's old file name). A file that spells none of them has nothing to rewrite,
 * so the rename never loads it. The type check does not use this: it looks at every user file.
 */
import type { SchemaRename } from '../migrate/index.js';

/** The texts one of which a user file must contain for the renames to change it. */
export function renameMarks(renames: readonly SchemaRename[]): string[] {
  const marks = new Set<string>();
  for (const change of renames) {
    if (change.kind === 'field') {
      if (change.field !== undefined) marks.add(change.field.old);
    } else {
      marks.add(change.old.typeName);
      marks.add(`${change.old.camelName}Hooks`);
      marks.add(change.old.fileName);
    }
  }
  return [...marks];
}

/** Whether `text` contains one of `marks` (see `renameMarks`). */
export function mayMention(text: string, marks: readonly string[]): boolean {
  return marks.some((mark) => text.includes(mark));
}
