/**
 * `workqueue-doctor generate`: writes the dashboards, the alert rules, the runbooks and the monitoring
 * manifests under `--out` (default: the current directory, the repository root), from the diagnosis
 * definitions with the overrides of `--config`, and the report's JSON Schema.
 *
 * `--check` writes nothing: it regenerates in memory, compares with the files on disk and exits 1 naming
 * every stale, missing or leftover file (0 when all are fresh).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, type Stats, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_RUNBOOK_BASE_URL } from '../diagnosis/runbook.js';
import { GENERATED_DIRECTORIES, type GeneratedFile, generateAllArtifacts } from '../generate/artifacts.js';
import { type GenerateConfig, generateConfigOf } from '../generate/generate-config.js';
import { loadCommandConfig } from './config-file.js';
import { EXIT, UsageError } from './exit-codes.js';
import { cannotWrite, isFileSystemError } from './output-files.js';

interface GenerateFlags {
  out: string;
  config?: string;
  check?: boolean;
  runbookBaseUrl?: string;
}

export function registerGenerateCommand(program: Command): void {
  program
    .command('generate')
    .description(
      'Write the Grafana dashboards (dashboards/), the Prometheus alert rules and runbooks (alerts/) and the ' +
        'Kubernetes monitoring manifests (deploy/monitoring/) from the diagnosis definitions, and the JSON Schema ' +
        'of the report (schemas/report.schema.json).',
    )
    .option('--out <dir>', 'directory to write into (in a checkout of the repository: its root)', '.')
    .option(
      '--config <file>',
      'the configuration file every command reads (see deploy/config-example.yaml): generate reads the fleet selector (selector: \'job=~"my-operator.*"\'), the cluster and namespace labels (clusterLabel, namespaceLabel), dashboardsReadRecordings, runbookBaseUrl, rule overrides (rules:) and per-queue overrides and silences (queues:)',
    )
    .option('--check', 'write nothing; exit 1 naming every generated file that is stale, missing or left over')
    .option(
      '--runbook-base-url <url>',
      `base URL of the runbooks linked from alerts and dashboards (default ${DEFAULT_RUNBOOK_BASE_URL})`,
    )
    .action(async (flags: GenerateFlags) => {
      process.exitCode = await runGenerate(flags, await loadConfig(flags));
    });
}

async function runGenerate(flags: GenerateFlags, config: GenerateConfig): Promise<number> {
  const files = await generateAllArtifacts(config);
  const out = resolve(flags.out);
  checkOutDirectory(flags.out);
  if (flags.check === true) {
    const problems = checkFiles(out, files);
    for (const problem of problems) process.stderr.write(`${problem}\n`);
    if (problems.length > 0) {
      process.stderr.write(
        `${problems.length} generated file(s) out of date in ${out}: run \`workqueue-doctor generate\`${flags.config === undefined ? '' : ` --config ${flags.config}`}\n`,
      );
      return EXIT.findings;
    }
    process.stdout.write(`${files.length} generated files are up to date in ${out}\n`);
    return EXIT.ok;
  }
  for (const file of files) {
    const path = join(out, file.path);
    try {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, file.content);
    } catch (error) {
      if (isFileSystemError(error)) throw cannotWrite('--out', path, error);
      throw error;
    }
  }
  for (const leftover of leftovers(out, files)) {
    rmSync(join(out, leftover));
    process.stdout.write(`removed ${leftover} (no longer generated)\n`);
  }
  process.stdout.write(`wrote ${files.length} files under ${out}\n`);
  return EXIT.ok;
}

/** `--out` is a directory, or nothing yet (it is created); anything else is a usage error saying so. */
function checkOutDirectory(out: string): void {
  let info: Stats | undefined;
  try {
    info = statSync(out);
  } catch {
    return;
  }
  if (!info.isDirectory()) {
    throw new UsageError(
      `--out ${out}: is a file, not a directory; give the directory to write into (a missing one is created)`,
      { hint: false },
    );
  }
}

/** The configuration of `--config` (the one file of every command) under the flags. */
async function loadConfig(flags: GenerateFlags): Promise<GenerateConfig> {
  return generateConfigOf(await loadCommandConfig({ config: flags.config, runbookBaseUrl: flags.runbookBaseUrl }));
}

/** One line per file that differs from what would be generated: `stale`, `missing` or `not generated`. */
function checkFiles(out: string, files: readonly GeneratedFile[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    let onDisk: string | undefined;
    try {
      onDisk = readFileSync(join(out, file.path), 'utf8');
    } catch {
      onDisk = undefined;
    }
    if (onDisk === undefined) problems.push(`missing: ${file.path}`);
    else if (onDisk !== file.content) problems.push(`stale: ${file.path}`);
  }
  for (const leftover of leftovers(out, files)) problems.push(`not generated (remove it): ${leftover}`);
  return problems;
}

/** Files in the wholly generated directories that generation no longer produces. */
function leftovers(out: string, files: readonly GeneratedFile[]): string[] {
  const expected = new Set(files.map((f) => f.path));
  const found: string[] = [];
  for (const { dir, extension } of GENERATED_DIRECTORIES) {
    let names: string[];
    try {
      names = readdirSync(join(out, dir));
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const path = posix.join(dir, name);
      if (name.endsWith(extension) && !expected.has(path)) found.push(path);
    }
  }
  return found;
}
