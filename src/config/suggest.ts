// "Did you mean": the nearest known name to a mistyped one (a flag, a command, a config key), and the
// keys a config object accepts at a path of the schema, for `unknown key statc (did you mean static?)`.
import type { z } from 'zod';

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), cut off above `max`. */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The name `typed` most likely meant: the only one it is a prefix of (`po` -> `port`), else the nearest
 * within 2 edits (a third of the name's length for short names); undefined when none is close.
 * Case-insensitive.
 */
export function closestName(typed: string, names: readonly string[]): string | undefined {
  const t = typed.toLowerCase();
  if (t === '') return undefined;
  const prefixed = names.filter((n) => n.toLowerCase().startsWith(t));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const n of names) {
    const max = Math.min(2, Math.max(1, Math.floor(n.length / 3)));
    const dd = editDistance(t, n.toLowerCase(), max);
    if (dd <= max && dd < bestD) {
      best = n;
      bestD = dd;
    }
  }
  return best;
}

/** The parts of zod's schema definitions walked here (zod 4 `_zod.def`). */
interface Def {
  readonly type: string;
  readonly innerType?: Schema;
  readonly in?: Schema;
  readonly getter?: () => Schema;
  readonly options?: readonly Schema[];
  readonly left?: Schema;
  readonly right?: Schema;
  readonly shape?: Record<string, Schema>;
  readonly element?: Schema;
  readonly valueType?: Schema;
}
interface Schema {
  readonly _zod: { readonly def: Def };
}

/** The schemas a value may match once wrappers (optional, default, a transform's input, unions) are removed. */
function alternatives(s: Schema, depth = 0): Schema[] {
  const def = s._zod.def;
  if (depth > 32) return [];
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
    case 'nonoptional':
      return def.innerType ? alternatives(def.innerType, depth + 1) : [];
    case 'pipe':
      return def.in ? alternatives(def.in, depth + 1) : [];
    case 'lazy':
      return def.getter ? alternatives(def.getter(), depth + 1) : [];
    case 'union':
      return (def.options ?? []).flatMap((o) => alternatives(o, depth + 1));
    case 'intersection':
      return [def.left, def.right].flatMap((o) => (o ? alternatives(o, depth + 1) : []));
    default:
      return [s];
  }
}

/** The keys the schema's objects accept at `path` (a config key path as zod reports it). */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let level = alternatives(schema as unknown as Schema);
  for (const p of path) {
    const next: Schema[] = [];
    for (const s of level) {
      const def = s._zod.def;
      if (def.type === 'object' && typeof p === 'string' && def.shape?.[p] !== undefined)
        next.push(def.shape[p]);
      else if (def.type === 'array' && typeof p === 'number' && def.element) next.push(def.element);
      else if (def.type === 'record' && def.valueType) next.push(def.valueType);
    }
    level = next.flatMap((s) => alternatives(s));
  }
  const keys = new Set<string>();
  for (const s of level) {
    const def = s._zod.def;
    if (def.type === 'object') for (const k of Object.keys(def.shape ?? {})) keys.add(k);
  }
  return [...keys];
}
