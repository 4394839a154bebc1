/**
 * The names of one generated module. A module imports names from the runtime and declares or
 * imports names made from the schema (`Issue`, `readRecordBody` for an entity RECORD_BODY,
 * `TransportAccessor`…); where the two clash, the runtime's name is imported under another one
 * (`type Issue as RuntimeIssue`), so any schema's names generate code that compiles.
 */
export class ModuleScope {
  private readonly taken: Set<string>;
  private readonly imported = new Map<string, { local: string; type: boolean }>();

  /** `own`: every name the module declares or imports from elsewhere than the runtime. */
  constructor(own: Iterable<string>) {
    this.taken = new Set(own);
  }

  /** The local name of the runtime value `name` (a function, a constant), imported. */
  value(name: string): string {
    return this.use(name, false);
  }

  /** The local name of the runtime type `name`, imported as a type. */
  type(name: string): string {
    return this.use(name, true);
  }

  /**
   * The specifiers of the runtime import, sorted by name ignoring case and `type`:
   * `defineEntity, type Issue as RuntimeIssue, toText`.
   */
  specifiers(): string[] {
    return [...this.imported.entries()]
      .map(([name, { local, type }]) => ({
        name,
        text: `${type ? 'type ' : ''}${name}${local === name ? '' : ` as ${local}`}`,
      }))
      .sort((a, b) => compareNames(a.name, b.name))
      .map((entry) => entry.text);
  }

  private use(name: string, type: boolean): string {
    const known = this.imported.get(name);
    if (known !== undefined) return known.local;
    let local = name;
    if (this.taken.has(local)) {
      // `Issue` → `RuntimeIssue`, `readRecordBody` → `runtimeReadRecordBody`.
      const stem = `${type || /^[A-Z]/.test(name) ? 'Runtime' : 'runtime'}${name.charAt(0).toUpperCase()}${name.slice(1)}`;
      local = stem;
      for (let suffix = 2; this.taken.has(local); suffix++) local = `${stem}${suffix}`;
    }
    this.taken.add(local);
    this.imported.set(name, { local, type });
    return local;
  }
}

/** By name ignoring case, then by code units: the order imports are listed in. */
export function compareNames(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
}
