// PLACEHOLDER (being written): library routes.
import type { IncomingMessage } from 'node:http';
import type { JsonpOptions } from './jsonp.js';
import type { LimitsOptions } from './options.js';
import type { Step, StepContext } from './pipeline.js';
export interface Route {
  path: string;
  handler: (req: IncomingMessage) => unknown;
}
export function createRoutes(
  _r: readonly Route[],
  _j: JsonpOptions | undefined,
  _l: LimitsOptions,
  _ctx: StepContext,
): Step | undefined {
  return undefined;
}
