import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.ts';
import { SIM_CONFIG } from '../helpers/train.ts';
import { tmpDir, writeFiles } from '../helpers/tmp.ts';

describe('skillopt train', () => {
  it("runs the README's demo and prints the improvement, keeping secrets out of every file and the console", () => {
    const dir = tmpDir();
    writeFiles(dir, {
      'secret.yaml': `_base_: ${SIM_CONFIG}\nmodel:\n  judge:\n    base_url: \${DEMO_API_KEY}\n`,
    });
    const out = path.join(dir, 'run');
    const secret = 'sk-demo-0123456789';
    const r = runCli(['train', '--config', path.join(dir, 'secret.yaml'), '--out', out], { env: { DEMO_API_KEY: secret } });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /resolved config/);
    assert.match(r.stdout, /\[1\] initial skill\n\s+overall\s+: hard=\d+\/60=0\.\d{4}/);
    const m = r.stdout.match(/test: initial=(\d\.\d{4}) {2}best=(\d\.\d{4})/);
    assert.ok(m, 'the final line gives the test scores');
    assert.ok(Number(m![1]) < 0.4 && Number(m![2]) > 0.85, m![0]);
    assert.match(r.stdout, new RegExp(`Output saved to: ${out}`));
    assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), 'not on the console');
    for (const f of fs.readdirSync(out, { recursive: true }) as string[]) {
      const file = path.join(out, f);
      if (fs.statSync(file).isFile()) assert.ok(!fs.readFileSync(file, 'utf8').includes(secret), `not in ${f}`);
    }
    const config = JSON.parse(fs.readFileSync(path.join(out, 'config.json'), 'utf8'));
    assert.equal(config.config.model.judge.base_url, '****');
  });

  it('writes under outputs/<env>/<timestamp> when no --out is given', () => {
    const dir = tmpDir();
    const r = runCli(['train', '--config', SIM_CONFIG, '--set', 'train.num_epochs=1', '--set', 'evaluation.eval_test=false'], { cwd: dir });
    assert.equal(r.status, 0, r.stderr);
    const runs = fs.readdirSync(path.join(dir, 'outputs', 'sim'));
    assert.equal(runs.length, 1);
    assert.match(runs[0]!, /^\d{8}_\d{6}$/);
  });
});
