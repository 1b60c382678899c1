// PLACEHOLDER (being written): CORS step.
import type { Step, StepContext } from './pipeline.js';
export interface CorsOptions {
  origins: string[];
}
export function createCors(_o: CorsOptions | undefined, _ctx: StepContext): Step | undefined {
  return undefined;
}
