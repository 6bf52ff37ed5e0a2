/** Types of memory-tmpdir.js (plain JavaScript: scripts/test.js runs it before any TypeScript loads). */
export declare function memoryTempDir(): string | undefined;
