/** `skillopt export`: a run's best skill as a `.skill` archive, the format skill-creator's `package_skill.py` writes. */
import type { Command } from 'commander';

export function registerExport(program: Command): void {
  program
    .command('export')
    .description(
      "Write a run's best skill (best_skill.md and, for a package, its files) as a .skill archive, as skill-creator packages a skill",
    )
    .argument('<run>', 'the run directory (holding best_skill.md)')
    .requiredOption('--out <file>', 'the archive to write (FILE.skill or FILE.zip)')
    .option('--name <name>', "the skill's folder in the archive (default: its front matter's name)")
    .action(async (run: string, opts: { out: string; name?: string }) => {
      // Loaded when the command runs: --help stays light.
      const fs = (await import('node:fs')).default;
      const path = (await import('node:path')).default;
      const { frontMatterField } = await import('../deploy/front-matter.ts');
      const { UserError } = await import('../errors.ts');
      const { RunDir } = await import('../run/layout.ts');
      const { readSkillFile } = await import('../run/skill-files.ts');
      const { frontMatterProblems } = await import('../skill/agent-skill.ts');
      const { writePackageArchive } = await import('../skill/package/archive.ts');
      const { packageEntries } = await import('../skill/package/package.ts');
      const { frontMatter } = await import('../skill/regions.ts');
      const dir = new RunDir(run);
      if (!fs.existsSync(dir.bestSkill)) throw new UserError(`${dir.bestSkill} not found: is ${run} a run directory?`);
      const pkg = readSkillFile(dir, dir.bestSkill)!;
      const problems = frontMatterProblems(pkg.skill);
      if (problems.length)
        throw new UserError(
          `${dir.bestSkill} cannot be packaged as an Agent Skill: ${problems.join('; ')}. Deploy it with \`skillopt deploy\` (which writes the front matter), or add name and description to the initial skill`,
        );
      const name = opts.name ?? frontMatterField(frontMatter(pkg.skill), 'name')!;
      if (!/\.(skill|zip)$/i.test(opts.out))
        throw new UserError(`--out: expected a .skill or .zip file, got ${opts.out}`);
      writePackageArchive(opts.out, pkg, name);
      const entries = packageEntries(pkg);
      const bytes = entries.reduce((n, e) => n + e.size, 0);
      process.stdout.write(
        `wrote ${path.resolve(opts.out)}: ${name}/ with ${entries.length} file(s), ${bytes.toLocaleString('en')} bytes\n`,
      );
    });
}
