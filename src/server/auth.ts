// PLACEHOLDER (being written): access control step.
import type { Step, StepContext } from './pipeline.js';
export interface AuthRule {
  prefix: string;
}
export function createAuth(_r: readonly AuthRule[], _ctx: StepContext): Step | undefined {
  return undefined;
}
