// PLACEHOLDER (being written): JSONP step for static .json files.

import type { Step, StepContext } from './pipeline.js';
import type { FileView } from './static/files.js';
export interface JsonpOptions {
  paths: string[];
}
export function createJsonp(
  _o: JsonpOptions | undefined,
  _files: FileView,
  _ctx: StepContext,
): Step | undefined {
  return undefined;
}
