/** Bundles the service's entry points into `{root}/build` (see build.js). */
export declare const ENTRY_POINTS: Record<string, string>;
export declare function buildService(options?: { root?: string }): Promise<void>;
