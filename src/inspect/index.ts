// gatehouse check as a library: record the site live, run the pure checks, return the Report.
import { type CheckOptions, record } from './live.js';
import { buildReport } from './report.js';
import type { Recording, Report } from './types.js';

export type { CheckOptions } from './live.js';
export { CheckUsageError } from './live.js';
export type { Finding, Report } from './types.js';

/** The site could not be checked: the first request (or the final URL's) got no answer. */
export class CheckUnreachableError extends Error {
  readonly code = 'GATEHOUSE_CHECK_UNREACHABLE';
}

/** Why there is no final response to check (a loop, a dead hop, ...), or undefined when there is one. */
export function noFinalResponse(rec: Recording): string | undefined {
  const primary = rec.probes.primary;
  if (primary?.response !== undefined) return undefined;
  if (primary?.error !== undefined) return `${rec.finalUrl}: ${primary.error}`;
  const last = rec.redirects[rec.redirects.length - 1];
  return `${last?.request.url ?? rec.url}: ${last?.error ?? 'no response'}`;
}

/** Unreachable: the URL given got no answer, or the final URL's primary request failed. A chain that
 *  answers but never ends (a loop, too many hops, a bad Location) is reported, not thrown. */
export function unreachableReason(rec: Recording): string | undefined {
  const first = rec.redirects[0];
  if (first !== undefined && first.response === undefined) return `${first.request.url}: ${first.error}`;
  const primary = rec.probes.primary;
  if (primary !== undefined && primary.response === undefined) return `${rec.finalUrl}: ${primary.error}`;
  return undefined;
}

/** Records `url` and its probes, then runs the checks. */
export async function inspectSite(
  url: string,
  options: CheckOptions = {},
): Promise<{ recording: Recording; report: Report }> {
  const recording = await record(url, options);
  return { recording, report: buildReport(recording) };
}

/**
 * `import { checkUrl } from 'gatehouse-http'`: the report `gatehouse check --json` prints. Rejects with
 * CheckUnreachableError when the site does not answer, CheckUsageError for a URL or option it
 * cannot use. A redirect chain that never ends is in the report (the redirects area).
 */
export async function checkUrl(url: string, options: CheckOptions = {}): Promise<Report> {
  const { recording, report } = await inspectSite(url, options);
  const why = unreachableReason(recording);
  if (why !== undefined) throw new CheckUnreachableError(why);
  return report;
}
