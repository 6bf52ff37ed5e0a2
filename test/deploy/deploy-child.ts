/** A child process that deploys a run's package, or rolls it back (`deploy-crash.test.ts` kills it at each step). Arguments: deploy|rollback, the run, the project. */
import { deploySkill, rollbackSkill } from '../../src/deploy/deploy.ts';

const [op, run, project] = process.argv.slice(2) as [string, string, string];
if (op === 'deploy') deploySkill({ run, agent: 'claude', scope: { project } });
else rollbackSkill({ agent: 'claude', scope: { project } });
