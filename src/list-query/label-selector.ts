/**
 * Kubernetes label selectors, in the syntax the kube-apiserver accepts for `?labelSelector=`:
 * comma-separated requirements, all of which must hold.
 *
 *   key            the label exists          !key            the label does not exist
 *   key=v, key==v  exists with value v       key!=v          absent, or value other than v
 *   key in (a,b)   exists with a listed value key notin (a,b) absent, or value not listed
 *   key>n, key<n   exists and its value is an integer greater/less than n
 *
 * Keys are qualified names (optional DNS-subdomain prefix and `/`), values are empty or label values.
 * Parsing follows k8s.io/apimachinery's labels.Parse, including its corner cases (`key=` means the
 * empty value, `key in ()` is the set holding the empty value).
 */

export type Operator = 'exists' | '!exists' | '=' | '!=' | 'in' | 'notin' | '>' | '<';

export interface Requirement {
  key: string;
  operator: Operator;
  /** Empty for `exists`/`!exists`; one value for `=`, `!=`, `>`, `<`. */
  values: readonly string[];
}

export type Labels = Readonly<Record<string, string>> | undefined;

export class LabelSelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LabelSelectorError';
  }
}

export class LabelSelector {
  readonly requirements: readonly Requirement[];
  readonly #matchers: ((labels: Labels) => boolean)[];

  constructor(requirements: readonly Requirement[]) {
    this.requirements = requirements;
    this.#matchers = requirements.map(matcherFor);
  }

  /** True for the empty selector, which selects everything. */
  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(labels: Labels): boolean {
    for (const match of this.#matchers) if (!match(labels)) return false;
    return true;
  }

  /** The selector in the kube-apiserver's syntax (for passing it on as `?labelSelector=`). */
  toString(): string {
    return this.requirements.map(requirementText).join(',');
  }
}

function requirementText({ key, operator, values }: Requirement): string {
  switch (operator) {
    case 'exists':
      return key;
    case '!exists':
      return `!${key}`;
    case 'in':
    case 'notin':
      return `${key} ${operator} (${values.join(',')})`;
    default:
      return `${key}${operator}${values[0]!}`;
  }
}

function matcherFor(r: Requirement): (labels: Labels) => boolean {
  const { key } = r;
  const has = (labels: Labels) => labels !== undefined && Object.hasOwn(labels, key);
  switch (r.operator) {
    case 'exists':
      return has;
    case '!exists':
      return (labels) => !has(labels);
    case '=': {
      const value = r.values[0];
      return (labels) => has(labels) && labels![key] === value;
    }
    case '!=': {
      const value = r.values[0];
      return (labels) => !has(labels) || labels![key] !== value;
    }
    case 'in': {
      const set = new Set(r.values);
      return (labels) => has(labels) && set.has(labels![key]!);
    }
    case 'notin': {
      const set = new Set(r.values);
      return (labels) => !has(labels) || !set.has(labels![key]!);
    }
    case '>':
    case '<': {
      const bound = BigInt(r.values[0]!);
      const greater = r.operator === '>';
      return (labels) => {
        if (!has(labels)) return false;
        const text = labels![key]!;
        if (!INTEGER.test(text)) return false;
        const n = BigInt(text);
        return greater ? n > bound : n < bound;
      };
    }
  }
}

const INTEGER = /^[+-]?\d+$/;

// ---------------------------------------------------------------------------------------------
// Lexer

type TokenKind =
  'identifier' | 'end' | ',' | '(' | ')' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';

interface Token {
  kind: TokenKind;
  text: string;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (WHITESPACE.has(ch)) {
      i++;
      continue;
    }
    if (SPECIAL.has(ch)) {
      const two = input.slice(i, i + 2);
      if (two === '==' || two === '!=') {
        tokens.push({ kind: two, text: two });
        i += 2;
      } else {
        tokens.push({ kind: ch as TokenKind, text: ch });
        i++;
      }
      continue;
    }
    let j = i;
    while (j < input.length && !WHITESPACE.has(input[j]!) && !SPECIAL.has(input[j]!)) j++;
    const text = input.slice(i, j);
    tokens.push({ kind: 'identifier', text });
    i = j;
  }
  tokens.push({ kind: 'end', text: 'end of string' });
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
  readonly #tokens: Token[];
  #position = 0;

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  /** `in`/`notin` are keywords only where an operator is expected; elsewhere they are plain words. */
  peek(operatorContext = false): Token {
    const token = this.#tokens[this.#position]!;
    if (operatorContext && token.kind === 'identifier' && (token.text === 'in' || token.text === 'notin')) {
      return { kind: token.text, text: token.text };
    }
    return token;
  }

  next(operatorContext = false): Token {
    const token = this.peek(operatorContext);
    if (token.kind !== 'end') this.#position++;
    return token;
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      const token = this.peek();
      if (token.kind === 'end') return requirements;
      if (token.kind !== 'identifier' && token.kind !== '!') {
        throw new LabelSelectorError(`found '${token.text}', expected: !, identifier, or end of string`);
      }
      requirements.push(this.requirement());
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') {
        throw new LabelSelectorError(`found '${after.text}', expected: ',' or end of string`);
      }
      const following = this.peek();
      if (following.kind !== 'identifier' && following.kind !== '!') {
        throw new LabelSelectorError(`found '${following.text}', expected: identifier after ','`);
      }
    }
  }

  requirement(): Requirement {
    if (this.peek().kind === '!') {
      this.next();
      const key = this.key();
      const after = this.peek();
      if (after.kind !== ',' && after.kind !== 'end') {
        throw new LabelSelectorError(`found '${after.text}', expected: ',' or end of string after !${key}`);
      }
      return { key, operator: '!exists', values: [] };
    }
    const key = this.key();
    const op = this.peek(true);
    if (op.kind === ',' || op.kind === 'end') return { key, operator: 'exists', values: [] };
    this.next(true);
    switch (op.kind) {
      case '=':
      case '==':
        return { key, operator: '=', values: [this.exactValue()] };
      case '!=':
        return { key, operator: '!=', values: [this.exactValue()] };
      case '>':
      case '<': {
        const value = this.exactValue();
        if (!INTEGER.test(value)) {
          throw new LabelSelectorError(
            `for '${op.kind}' the value must be an integer, got ${JSON.stringify(value)}`,
          );
        }
        return { key, operator: op.kind, values: [value] };
      }
      case 'in':
      case 'notin':
        return { key, operator: op.kind, values: this.valueSet(op.kind) };
      default:
        throw new LabelSelectorError(
          `found '${op.text}', expected an operator after ${JSON.stringify(key)}: =, ==, !=, in, notin, >, <`,
        );
    }
  }

  key(): string {
    const token = this.next();
    if (token.kind !== 'identifier') throw new LabelSelectorError(`found '${token.text}', expected: key`);
    const problem = qualifiedNameProblem(token.text);
    if (problem) throw new LabelSelectorError(`invalid label key ${JSON.stringify(token.text)}: ${problem}`);
    return token.text;
  }

  exactValue(): string {
    const token = this.peek();
    if (token.kind === ',' || token.kind === 'end') return '';
    this.next();
    if (token.kind !== 'identifier') throw new LabelSelectorError(`found '${token.text}', expected: value`);
    return checkedValue(token.text);
  }

  valueSet(operator: 'in' | 'notin'): string[] {
    const open = this.next();
    if (open.kind !== '(') {
      throw new LabelSelectorError(`found '${open.text}', expected: '(' after '${operator}'`);
    }
    // Mirrors apimachinery: "()" is {""}, and empty entries between commas are the empty value.
    const values = new Set<string>();
    let expectValue = true;
    for (;;) {
      const token = this.next();
      if (token.kind === ')') {
        if (expectValue) values.add('');
        return [...values];
      }
      if (token.kind === ',') {
        if (expectValue) values.add('');
        expectValue = true;
        continue;
      }
      if (token.kind === 'identifier' && expectValue) {
        values.add(checkedValue(token.text));
        expectValue = false;
        continue;
      }
      throw new LabelSelectorError(
        `found '${token.text}', expected: ${expectValue ? "value, ',' or ')'" : "',' or ')'"} in '${operator}' list`,
      );
    }
  }
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'a qualified name has at most one "/"';
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'the prefix before "/" must not be empty';
    if (prefix.length > 253) return 'the prefix must be no more than 253 characters';
    if (!DNS_SUBDOMAIN.test(prefix)) return 'the prefix must be a lowercase DNS subdomain';
  }
  if (name.length === 0) return 'the name part must not be empty';
  if (name.length > 63) return 'the name part must be no more than 63 characters';
  if (!NAME.test(name)) {
    return 'the name part must consist of alphanumerics, "-", "_" or ".", and start and end with an alphanumeric';
  }
  return undefined;
}

function checkedValue(value: string): string {
  if (value.length > 63) {
    throw new LabelSelectorError(`invalid label value ${JSON.stringify(value)}: no more than 63 characters`);
  }
  if (value.length > 0 && !NAME.test(value)) {
    throw new LabelSelectorError(
      `invalid label value ${JSON.stringify(value)}: alphanumerics, "-", "_" or ".", starting and ending with an alphanumeric`,
    );
  }
  return value;
}

/** Parses a selector; throws LabelSelectorError with a message fit for a 400 response. */
export function parseLabelSelector(text: string): LabelSelector {
  return new LabelSelector(new Parser(tokenize(text)).parse());
}

/** Matches everything. */
export const EVERYTHING = new LabelSelector([]);

// ---------------------------------------------------------------------------------------------
// The same grammar as one regular expression, for the OpenAPI document (clients can check a selector
// before sending it). test/unit/label-selector.test.ts checks that it accepts exactly what the parser does.

const SPACE = '[ \\t\\r\\n]*';
const NAME_PART = '[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const DNS_LABEL_PART = '[a-z0-9](?:[-a-z0-9]*[a-z0-9])?';
// The lookahead bounds the prefix to 253 characters (it holds only these characters up to the "/").
const KEY_PART = `(?:(?=[-a-z0-9.]{1,253}/)${DNS_LABEL_PART}(?:\\.${DNS_LABEL_PART})*/)?${NAME_PART}`;
const VALUE_PART = `(?:${NAME_PART})?`;
const SET_PART = `\\(${SPACE}${VALUE_PART}${SPACE}(?:,${SPACE}${VALUE_PART}${SPACE})*\\)`;
const REQUIREMENT_PART =
  `(?:!${SPACE}${KEY_PART}|${KEY_PART}(?:${SPACE}(?:==?|!=)${SPACE}${VALUE_PART}` +
  `|${SPACE}[<>]${SPACE}[0-9]{1,63}|[ \\t\\r\\n]+(?:in|notin)${SPACE}${SET_PART})?)`;

/** ECMA-262 pattern matching exactly the selectors `parseLabelSelector` accepts. */
export const LABEL_SELECTOR_PATTERN = `^${SPACE}(?:${REQUIREMENT_PART}(?:${SPACE},${SPACE}${REQUIREMENT_PART})*)?${SPACE}$`;
