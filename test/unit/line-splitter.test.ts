import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LineSplitter } from '../../src/cluster/line-splitter.ts';

const text = (lines: Buffer[]) => lines.map((l) => l.toString('utf8'));

test('a chunk of whole lines gives each line without its newline', () => {
  const lines = new LineSplitter();
  assert.deepEqual(text(lines.push(Buffer.from('{"a":1}\n{"b":2}\n'))), ['{"a":1}', '{"b":2}']);
});

test('a line split across chunks comes out whole, once its newline arrives', () => {
  const lines = new LineSplitter();
  assert.deepEqual(text(lines.push(Buffer.from('{"type":"ADD'))), []);
  assert.deepEqual(text(lines.push(Buffer.from('ED","obj'))), []);
  assert.deepEqual(text(lines.push(Buffer.from('ect":{}}\n{"x"'))), ['{"type":"ADDED","object":{}}']);
  assert.deepEqual(text(lines.push(Buffer.from(':1}\n'))), ['{"x":1}']);
});

test('a multi-byte character split between chunks is not broken', () => {
  const bytes = Buffer.from('{"name":"nœud"}\n');
  const cut = bytes.indexOf(0xc5) + 1; // inside the two bytes of "œ"
  const lines = new LineSplitter();
  assert.deepEqual(text(lines.push(bytes.subarray(0, cut))), []);
  assert.deepEqual(text(lines.push(bytes.subarray(cut))), ['{"name":"nœud"}']);
});

test('empty lines are lines too (the caller skips them)', () => {
  const lines = new LineSplitter();
  assert.deepEqual(text(lines.push(Buffer.from('\n\n{}\n'))), ['', '', '{}']);
});
