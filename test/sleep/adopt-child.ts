/** A child process that adopts a night (`adopt-crash.test.ts` kills it at each step). Arguments: the state folder and the night. */
import { adopt } from '../../src/sleep/adoption/adopt.ts';

adopt(process.argv[2]!, process.argv[3]!, undefined);
