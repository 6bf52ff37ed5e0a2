/** Types of entry.js (plain JavaScript: it runs before anything can load TypeScript). */
export declare const BUILD_STAMP: string;
export declare function buildIsCurrent(root: string): boolean;
export declare function entryOf(root: string): { url: string; compiled: boolean };
