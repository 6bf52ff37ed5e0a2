/** What a check of the audit says: `pass`, `flag` (worth a second look) or `fail` (not to be trusted as it is). */
export type Verdict = 'pass' | 'flag' | 'fail';
