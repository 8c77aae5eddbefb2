import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  LABEL_SELECTOR_PATTERN,
  LabelSelectorError,
  parseLabelSelector,
} from '../../src/list-query/label-selector.ts';

const worker = { 'node-role.kubernetes.io/worker': '', zone: 'a', tier: 'gold', slots: '12' };
const master = { 'node-role.kubernetes.io/control-plane': '', zone: 'b', slots: '3' };
const bare = {};

function selects(selector: string, labels: Record<string, string> | undefined): boolean {
  return parseLabelSelector(selector).matches(labels);
}

describe('label selector: parsing', () => {
  test('every operator of the Kubernetes syntax', () => {
    assert.deepEqual(
      parseLabelSelector('a, !b, c=1, d==2, e!=3, f in (x, y), g notin (z), h>4, i<5').requirements,
      [
        { key: 'a', operator: 'exists', values: [] },
        { key: 'b', operator: '!exists', values: [] },
        { key: 'c', operator: '=', values: ['1'] },
        { key: 'd', operator: '=', values: ['2'] },
        { key: 'e', operator: '!=', values: ['3'] },
        { key: 'f', operator: 'in', values: ['x', 'y'] },
        { key: 'g', operator: 'notin', values: ['z'] },
        { key: 'h', operator: '>', values: ['4'] },
        { key: 'i', operator: '<', values: ['5'] },
      ],
    );
  });

  test('empty and blank selectors select everything', () => {
    assert.equal(parseLabelSelector('').empty, true);
    assert.equal(parseLabelSelector('   ').empty, true);
    assert.equal(selects('', undefined), true);
  });

  test('apimachinery corner cases: empty values', () => {
    assert.deepEqual(parseLabelSelector('a=').requirements[0]?.values, ['']);
    assert.deepEqual(parseLabelSelector('a in ()').requirements[0]?.values, ['']);
    assert.deepEqual(parseLabelSelector('a in (,x)').requirements[0]?.values, ['', 'x']);
    assert.deepEqual(parseLabelSelector('a in (x,)').requirements[0]?.values, ['x', '']);
    assert.deepEqual(parseLabelSelector('a in (x,x)').requirements[0]?.values, ['x']);
  });

  test('"in" and "notin" are words where a key or value is expected', () => {
    assert.deepEqual(parseLabelSelector('in=notin').requirements, [
      { key: 'in', operator: '=', values: ['notin'] },
    ]);
    assert.deepEqual(parseLabelSelector('x in (in,notin)').requirements[0]?.values, ['in', 'notin']);
  });

  test('qualified keys with prefixes', () => {
    assert.equal(
      parseLabelSelector('node-role.kubernetes.io/worker').requirements[0]?.key,
      'node-role.kubernetes.io/worker',
    );
  });

  const bad: [string, RegExp][] = [
    ['a=b=c', /found '='/],
    ['=a', /found '='/],
    ['a,', /expected: identifier after ','/],
    [',a', /found ','/],
    ['a in b', /expected: '\('/],
    ['a in (b', /in 'in' list/],
    ['a in (b c)', /in 'in' list/],
    ['a notin', /expected: '\(' after 'notin'/],
    ['!a=b', /found '='/],
    ['a b', /expected an operator/],
    ['a>b', /must be an integer/],
    ['a<', /must be an integer/],
    ['a>-1', /invalid label value/],
    ['a/b/c', /at most one "\/"/],
    ['/a', /prefix .* must not be empty/],
    ['Example.COM/a', /lowercase DNS subdomain/],
    ['-a', /start and end with an alphanumeric/],
    [`${'k'.repeat(64)}`, /no more than 63/],
    [`a=${'v'.repeat(64)}`, /no more than 63/],
    ['a=b c', /found 'c'/],
    ['a=-b', /invalid label value/],
    ['a==(b)', /found '\('/],
  ];
  for (const [selector, message] of bad) {
    test(`rejects ${JSON.stringify(selector)}`, () => {
      assert.throws(
        () => parseLabelSelector(selector),
        (err: unknown) => err instanceof LabelSelectorError && message.test(err.message),
      );
    });
  }
});

describe('label selector: matching', () => {
  test('existence, including labels whose value is empty', () => {
    assert.equal(selects('node-role.kubernetes.io/worker', worker), true);
    assert.equal(selects('node-role.kubernetes.io/worker', master), false);
    assert.equal(selects('!node-role.kubernetes.io/worker', master), true);
    assert.equal(selects('!node-role.kubernetes.io/worker', worker), false);
    assert.equal(selects('zone', undefined), false);
    assert.equal(selects('!zone', undefined), true);
  });

  test('equality matches the empty value only when the label is present', () => {
    assert.equal(selects('node-role.kubernetes.io/worker=', worker), true);
    assert.equal(selects('node-role.kubernetes.io/worker=', master), false);
    assert.equal(selects('zone=a', worker), true);
    assert.equal(selects('zone==a', master), false);
  });

  test('!= and notin also select nodes that lack the label', () => {
    assert.equal(selects('tier!=gold', worker), false);
    assert.equal(selects('tier!=gold', master), true);
    assert.equal(selects('tier notin (gold)', bare), true);
    assert.equal(selects('zone notin (a,b)', worker), false);
    assert.equal(selects('zone notin (c)', worker), true);
  });

  test('in requires the label', () => {
    assert.equal(selects('zone in (a, c)', worker), true);
    assert.equal(selects('zone in (c)', worker), false);
    assert.equal(selects('tier in (gold)', master), false);
  });

  test('> and < compare integers and never match non-integer values', () => {
    assert.equal(selects('slots>10', worker), true);
    assert.equal(selects('slots>10', master), false);
    assert.equal(selects('slots<10', master), true);
    assert.equal(selects('slots<10', bare), false);
    assert.equal(selects('zone>1', worker), false);
  });

  test('requirements are ANDed', () => {
    assert.equal(selects('zone=a,tier=gold', worker), true);
    assert.equal(selects('zone=a,tier=silver', worker), false);
    assert.equal(selects('zone=a,zone=b', worker), false);
  });
});

describe('label selector: the OpenAPI pattern', () => {
  // As a JSON Schema validator compiles `pattern`: an ECMA-262 regular expression in unicode mode.
  const pattern = new RegExp(LABEL_SELECTOR_PATTERN, 'u');
  const parses = (text: string) => {
    try {
      parseLabelSelector(text);
      return true;
    } catch (err) {
      if (err instanceof LabelSelectorError) return false;
      throw err;
    }
  };

  test('accepts and refuses what the parser does: hand-picked corner cases', () => {
    const cases = [
      '',
      '  ',
      'a',
      '!a',
      '! a',
      'a=',
      'a = b',
      'a==b',
      'a!=b',
      'a in ()',
      'a in (,)',
      'a in(b, ,c)',
      'a notin (b)',
      'ain (b)',
      'a in b',
      'a>5',
      'a > 05',
      'a>-5',
      'a>',
      'a<b',
      'in=notin',
      'k8s.io/a=b',
      'K8s.io/a=b',
      '/a',
      'a/b/c',
      `${'p'.repeat(253)}/a`,
      `${'p'.repeat(254)}/a`,
      `a=${'v'.repeat(63)}`,
      `a=${'v'.repeat(64)}`,
      'a,',
      ',a',
      'a,,b',
      'a b',
      'a=b c',
      '!a=b',
      'a=-b',
      'a=b_',
      'a=b\u00a0',
      'a\tin\n(b)',
      'node-role.kubernetes.io/worker, zone in (a, b), tier!=gold, slots>3',
    ];
    for (const text of cases) assert.equal(pattern.test(text), parses(text), JSON.stringify(text));
  });

  test('accepts and refuses what the parser does: 20 000 random strings of selector tokens', () => {
    const pieces = [
      'a',
      'b.c',
      'k8s.io/',
      'X',
      '-',
      '_',
      '5',
      'in',
      'notin',
      ' ',
      ',',
      '!',
      '=',
      '==',
      '!=',
      '(',
      ')',
      '>',
      '<',
      '/',
    ];
    // A fixed linear congruential sequence: the same strings on every run.
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      const length = 1 + (next() % 9);
      for (let j = 0; j < length; j++) text += pieces[next() % pieces.length];
      const expected = parses(text);
      if (expected) accepted++;
      assert.equal(pattern.test(text), expected, JSON.stringify(text));
    }
    assert.ok(accepted > 1000, `${accepted} valid selectors among the random strings`);
  });
});
