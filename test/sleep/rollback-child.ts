/** A child process that rolls back the latest adoption (`adopt-package-crash.test.ts` kills it at each step). Argument: the state folder. */
import { rollback } from '../../src/sleep/adoption/adopt.ts';

rollback(process.argv[2]!, undefined);
