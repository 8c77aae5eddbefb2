// Writes the files generated from the configuration schema (src/config/schema.ts):
//   charts/platform-apiserver/values.schema.json   its `config` section
//   docs/configuration.md                         the table between the GENERATED markers
// Usage: npm run generate            (writes what is stale)
//        node scripts/generate.ts --check   (exit 1 when a file is stale, writes nothing)
// test/unit/generated-files.test.ts runs generatedFiles() in memory and fails on a stale file.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { chartConfigSchema, configurationTable } from '../src/config/render.ts';

export const TABLE_BEGIN =
  '<!-- BEGIN GENERATED: configuration keys (npm run generate, from src/config/schema.ts); do not edit -->';
export const TABLE_END = '<!-- END GENERATED: configuration keys -->';

export interface GeneratedFile {
  /** Relative to the repository root. */
  path: string;
  /** What the file holds on disk now. */
  current: string;
  /** What it should hold. */
  wanted: string;
}

/** Every generated file's current and wanted content; reads, never writes. */
export async function generatedFiles(root: string): Promise<GeneratedFile[]> {
  return [await chartValuesSchema(root), configurationDoc(root)];
}

async function chartValuesSchema(root: string): Promise<GeneratedFile> {
  const file = 'charts/platform-apiserver/values.schema.json';
  const current = readFileSync(path.join(root, file), 'utf8');
  const doc: unknown = JSON.parse(current);
  if (!isRecord(doc) || !isRecord(doc['properties'])) throw new Error(`${file}: no top-level "properties"`);
  doc['properties']['config'] = chartConfigSchema();
  // Formatted as `npm run lint` (prettier --check) wants it.
  const options = (await prettier.resolveConfig(path.join(root, file))) ?? {};
  const wanted = await prettier.format(JSON.stringify(doc, null, 2), {
    ...options,
    filepath: path.join(root, file),
  });
  return { path: file, current, wanted };
}

function configurationDoc(root: string): GeneratedFile {
  const file = 'docs/configuration.md';
  const current = readFileSync(path.join(root, file), 'utf8');
  const begin = current.indexOf(TABLE_BEGIN);
  const end = current.indexOf(TABLE_END);
  if (begin < 0 || end < begin)
    throw new Error(`${file}: the markers ${TABLE_BEGIN} … ${TABLE_END} are missing`);
  const wanted =
    current.slice(0, begin + TABLE_BEGIN.length) + '\n' + configurationTable() + '\n' + current.slice(end);
  return { path: file, current, wanted };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function main(): Promise<void> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const check = process.argv.includes('--check');
  const stale = (await generatedFiles(root)).filter((f) => f.current !== f.wanted);
  for (const f of stale) {
    if (check) {
      console.error(`stale: ${f.path} (run npm run generate)`);
    } else {
      writeFileSync(path.join(root, f.path), f.wanted);
      console.log(`wrote ${f.path}`);
    }
  }
  if (stale.length === 0) console.log('generated files are up to date');
  if (check && stale.length > 0) process.exitCode = 1;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
