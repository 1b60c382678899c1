// Reading recorded messages: field values as RFC 9110 §5.3 combines them.
import type { Exchange, FieldLine, RecordedResponse } from './types.js';

/** All lines of a field, in order. */
export function fieldLines(headers: readonly FieldLine[], name: string): string[] {
  const lower = name.toLowerCase();
  const out: string[] = [];
  for (const [n, v] of headers) if (n === lower) out.push(v);
  return out;
}

/** The combined value (RFC 9110 §5.3: lines joined with ", "), or undefined when absent. */
export function field(headers: readonly FieldLine[], name: string): string | undefined {
  const lines = fieldLines(headers, name);
  return lines.length === 0 ? undefined : lines.join(', ');
}

/** `name: value` evidence for a field, or `no name field` when it is absent. */
export function evidenceOf(headers: readonly FieldLine[], name: string): string {
  const v = field(headers, name);
  return v === undefined ? `no ${name} field` : `${name}: ${v}`;
}

/** The response of a probe that got one. */
export function responseOf(x: Exchange | undefined): RecordedResponse | undefined {
  return x?.response;
}
