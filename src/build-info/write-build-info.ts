/**
 * Build step (`npm run build`, after tsc): writes `<outDir>/build-info.json`, the facts `/kapis/version`
 * serves from a built server.   node src/build-info/write-build-info.ts dist
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { commandRunner, gatherBuildFacts, packageJsonVersion } from './build-facts.ts';

if (import.meta.main) {
  const root = new URL('../../', import.meta.url);
  const outDir = path.resolve(fileURLToPath(root), process.argv[2] ?? 'dist');
  const facts = gatherBuildFacts({
    env: process.env,
    run: commandRunner(fileURLToPath(root)),
    packageVersion: packageJsonVersion(root),
    compiler: `tsc ${ts.version}`,
    now: new Date(),
  });
  const file = path.join(outDir, 'build-info.json');
  writeFileSync(file, `${JSON.stringify(facts, null, 2)}\n`);
  process.stdout.write(`wrote ${file}: ${facts.gitVersion} ${facts.gitCommit} (${facts.gitTreeState})\n`);
}
