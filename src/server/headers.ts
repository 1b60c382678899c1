// PLACEHOLDER (being written): header rules step.
import type { Step, StepContext } from './pipeline.js';
export interface HeaderRule {
  glob?: string;
}
export function createHeaderRules(_r: readonly HeaderRule[], _ctx: StepContext): Step | undefined {
  return undefined;
}
