// The fast lane's guard (`npm run test:unit` loads it with `--import`): a test of that lane runs
// the code in its own process, so starting any program (our CLI, an agent CLI, a browser, Redis,
// Python, git) fails at once, with an error that says where the test belongs. That keeps the lane
// fast by construction instead of by a list that drifts.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'];

// Only in the processes that run test files: the runner itself starts them.
if (process.env.NODE_TEST_CONTEXT)
  for (const name of STARTERS) {
    childProcess[name] = (file) => {
      throw new Error(
        `the fast lane starts no program, and this test started ${JSON.stringify(String(file))} through child_process.${name}: ` +
          'list its file among the slow ones in scripts/test.js (SLOW)',
      );
    };
  }
// Named imports (`import { spawn } from 'node:child_process'`) see the replacements too.
syncBuiltinESMExports();
