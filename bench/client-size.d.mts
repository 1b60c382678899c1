// Types for bench/client-size.mjs, so test/client/size.test.ts type-checks its import.
export declare const CLIENT_ENTRY: string;
export declare const WEBSOCKET_BUDGET_BYTES: number;
export interface SizeTarget {
  name: string;
  exportName: string | null;
  budgetBytes: number | null;
}
export declare const TARGETS: readonly SizeTarget[];
export declare const PEERS: readonly { name: string; gzipBytes: number; note: string }[];
export interface SizeRow {
  name: string;
  minBytes: number;
  gzipBytes: number;
  budgetBytes: number | null;
  ok: boolean;
}
export declare function measureExport(
  exportName: string | null,
): Promise<{ minBytes: number; gzipBytes: number; text: string }>;
export declare function measureClient(): Promise<SizeRow[]>;
export declare function formatTable(rows: readonly SizeRow[]): string;
