export declare function buildReason(repo?: string, o?: { missingOnly: boolean }): string | undefined;
