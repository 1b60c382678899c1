// PLACEHOLDER (being written): rate limit step.
import type { LimitsOptions } from './options.js';
import type { Step, StepContext } from './pipeline.js';
export interface RateLimitOptions {
  requestsPerSec: number;
}
export function createRateLimit(_l: LimitsOptions, _ctx: StepContext): Step | undefined {
  return undefined;
}
