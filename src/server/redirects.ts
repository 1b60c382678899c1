// PLACEHOLDER (being written): redirects step.
import type { Step, StepContext } from './pipeline.js';
export interface RedirectRule {
  from: string;
  to: string;
}
export function createRedirects(_r: readonly RedirectRule[], _ctx: StepContext): Step | undefined {
  return undefined;
}
