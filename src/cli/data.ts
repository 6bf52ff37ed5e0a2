import type { Command } from 'commander';

export function registerData(program: Command): void {
  const data = program.command('data').description('Prepare benchmark data');
  data
    .command('materialize')
    .description(
      "Build a benchmark's split directories (train/, val/, test/) from its published raw data; with --manifest, exactly the paper's splits",
    )
    .argument('<benchmark>', 'searchqa, livemathematicianbench, docvqa, officeqa or spreadsheetbench')
    .requiredOption('--raw <path>', 'the published raw data: a file or a directory')
    .option(
      '--manifest <dir>',
      "an id manifest (train/, val/, test/ with items.json holding ids), such as the original's data/<benchmark>_id_split",
    )
    .requiredOption('-o, --out <dir>', 'where to write the split directories')
    .option('--ratio <a:b:c>', 'train:val:test ratio without a manifest (default 2:1:7)')
    .option('--seed <n>', 'shuffle seed without a manifest', (v) => Number.parseInt(v, 10), 42)
    .option(
      '--allow-missing',
      'with --manifest: write the splits even when some ids are not in the raw data (they are listed)',
    )
    .option(
      '--docs <dir...>',
      'officeqa: the directories of the bulletin text files; items whose bulletins are not there are left out (and listed)',
    )
    .action(
      async (
        benchmark: string,
        opts: {
          raw: string;
          manifest?: string;
          out: string;
          ratio?: string;
          seed: number;
          allowMissing?: boolean;
          docs?: string[];
        },
      ) => {
        const { materialize } = await import('../envs/materialize.ts');
        const report = await materialize({ benchmark, ...opts });
        const { train, val, test } = report.counts;
        process.stdout.write(
          `${benchmark}: train=${train} val=${val} test=${test} (${report.mode === 'manifest' ? 'ids and order from the manifest' : `seeded split ${opts.ratio ?? '2:1:7'}, seed ${opts.seed}`})\n`,
        );
        const missing = Object.entries(report.missing).flatMap(([s, ids]) => ids.map((id) => `${s}:${id}`));
        if (missing.length)
          process.stdout.write(`missing from the raw data (${missing.length}): ${missing.join(', ')}\n`);
        if (report.leftOut.length) {
          const { describeLeftOut } = await import('../envs/data/left-out.ts');
          process.stderr.write(
            `warning: ${describeLeftOut(benchmark, report.leftOut, report.leftOut.length + train + val + test)} (listed in split_manifest.json)\n`,
          );
        }
        process.stdout.write(`written to ${report.out}\n`);
      },
    );
}
