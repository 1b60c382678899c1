export declare function isCI(env?: Record<string, string | undefined>): boolean;
