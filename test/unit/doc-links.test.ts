import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The Markdown a reader follows links through: the front door, the contributors' guide, docs/ and the chart's README. */
function documents(): string[] {
  const docs = readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', 'charts/platform-apiserver/README.md', ...docs];
}

/** The text outside fenced code blocks and inline code spans, where `#` and `[x](y)` are Markdown. */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** Every inline link target `[text](target)` in the prose, with its line number. */
function linksOf(markdown: string): { line: number; target: string }[] {
  return prose(markdown).flatMap((text, i) =>
    [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => ({ line: i + 1, target: m[1]! })),
  );
}

test('GitHub anchors: punctuation dropped, code-block comments are not headings, repeats numbered', () => {
  const anchors = anchorsOf(
    "# Log out / revoke\n## What the server's ServiceAccount needs\n```sh\n# not a heading\n```\n## Refresh\n## Refresh\n",
  );
  assert.deepEqual(
    [...anchors],
    ['log-out--revoke', 'what-the-servers-serviceaccount-needs', 'refresh', 'refresh-1'],
  );
  assert.deepEqual(
    linksOf('see [a](b.md#c) and `[x](not-a-link)`\n```\n[y](nor-this)\n```\n[d](#e "title")'),
    [
      { line: 1, target: 'b.md#c' },
      { line: 5, target: '#e' },
    ],
  );
});

test('every relative link in README, CONTRIBUTING, docs/ and the chart README reaches a file and heading', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const doc of documents()) {
    const text = readFileSync(path.join(root, doc), 'utf8');
    for (const { line, target } of linksOf(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check here
      checked++;
      const [file = '', anchor] = target.split('#');
      const resolved =
        file === '' ? path.join(root, doc) : path.resolve(path.dirname(path.join(root, doc)), file);
      const where = `${doc}:${line} → ${target}`;
      if (!resolved.startsWith(root) || !existsSync(resolved)) {
        broken.push(`${where}: no such file`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!statSync(resolved).isFile() || !resolved.endsWith('.md')) {
        broken.push(`${where}: an anchor into something that is not Markdown`);
      } else if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${where}: no heading with that anchor`);
      }
    }
  }
  assert.ok(checked > 20, `links were found (${checked})`);
  assert.deepEqual(broken, []);
});
