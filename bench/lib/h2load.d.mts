// Types for bench/lib/h2load.mjs, so test/bench/https.test.ts type-checks its import.
export interface H2loadResult {
  seconds: number;
  requestsPerSec: number;
  requests: number;
  succeeded: number;
  failed: number;
  errored: number;
  timeout: number;
  status: Partial<Record<'2xx' | '3xx' | '4xx' | '5xx', number>>;
  protocol: string | undefined;
  tls: string | undefined;
  errors: string[];
}
export declare function h2loadVersion(): string | undefined;
export declare function parseH2loadOutput(text: string): H2loadResult | undefined;
export declare function runH2load(o: {
  url: string;
  args: string[];
  durationSec?: number;
  requests?: number;
  timeoutSec?: number;
  expectProtocol?: string;
}): Promise<H2loadResult>;
