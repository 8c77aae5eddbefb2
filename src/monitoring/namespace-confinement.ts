import { ApiError } from '../kernel/api-error.ts';

/**
 * Confines a caller's PromQL to one namespace: every vector selector gets `namespace="<ns>"`, and any
 * `namespace` matcher of the caller's is dropped, so no selector can reach another namespace's series
 * (as the original does with prom-label-proxy's enforcer). The query is rewritten token by token; a
 * character this lexer does not know is refused (400) rather than passed through, so what reaches
 * Prometheus has a matcher on every selector this lexer saw.
 */
export function confineToNamespace(expr: string, namespace: string): string {
  const tokens = lex(expr);
  const out: string[] = [];
  const enforced = `namespace=${JSON.stringify(namespace)}`;
  let i = 0;
  const nextSignificant = (from: number) => tokens[from];
  while (i < tokens.length) {
    const token = tokens[i]!;
    if (token.kind === 'ident') {
      const lower = token.text.toLowerCase();
      const next = nextSignificant(i + 1);
      if (GROUPING.has(lower)) {
        out.push(token.text);
        i++;
        // The label list of by/without/on/ignoring/group_left/group_right: names, not selectors.
        if (tokens[i]?.text === '(') {
          const close = matching(tokens, i, '(', ')');
          for (let j = i; j <= close; j++) out.push(tokens[j]!.text);
          i = close + 1;
        }
        continue;
      }
      if (
        KEYWORDS.has(lower) ||
        next?.text === '(' ||
        (next && GROUPING_AFTER_AGGREGATION.has(next.text.toLowerCase()))
      ) {
        out.push(token.text);
        i++;
        continue;
      }
      // A metric name: its own matchers follow, or it gets the enforced one alone.
      if (next?.text === '{') {
        out.push(token.text);
        i++;
        continue;
      }
      out.push(`${token.text}{${enforced}}`);
      i++;
      continue;
    }
    if (token.text === '{') {
      const close = matching(tokens, i, '{', '}');
      out.push(matcherList(tokens.slice(i + 1, close), enforced));
      i = close + 1;
      continue;
    }
    out.push(token.text);
    i++;
  }
  return out.join(' ');
}

interface Token {
  kind: 'ident' | 'string' | 'number' | 'duration' | 'punct';
  text: string;
}

/** Operators and keywords that are never metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'atan2', 'inf', 'nan']);
/** Followed by a parenthesised list of label names. */
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** `sum by (x) (…)`: an aggregation whose grouping comes first. */
const GROUPING_AFTER_AGGREGATION = new Set(['by', 'without']);

const PATTERNS: [Token['kind'] | 'space' | 'comment', RegExp][] = [
  ['space', /^\s+/],
  ['comment', /^#[^\n]*/],
  ['string', /^"(?:[^"\\\n]|\\.)*"/],
  ['string', /^'(?:[^'\\\n]|\\.)*'/],
  ['string', /^`[^`]*`/],
  ['duration', /^\d+(?:ms|[smhdwy])(?:\d+(?:ms|[smhdwy]))*(?![A-Za-z0-9_])/],
  ['number', /^(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(?![A-Za-z0-9_])/],
  // A name may start with ":" (recorded series), but ":1m" in a subquery is a colon and a duration.
  ['ident', /^(?:[A-Za-z_]|:(?![0-9]))[A-Za-z0-9_:]*/],
  ['punct', /^(?:=~|!~|!=|==|<=|>=|[-+*/%^<>=(){}[\],@:])/],
];

function lex(expr: string): Token[] {
  const tokens: Token[] = [];
  let rest = expr;
  while (rest.length > 0) {
    let matched = false;
    for (const [kind, pattern] of PATTERNS) {
      const m = pattern.exec(rest);
      if (!m) continue;
      if (kind !== 'space' && kind !== 'comment') tokens.push({ kind, text: m[0] });
      rest = rest.slice(m[0].length);
      matched = true;
      break;
    }
    if (!matched)
      refuse(`unexpected character ${JSON.stringify(rest[0])} at position ${expr.length - rest.length + 1}`);
  }
  return tokens;
}

function matching(tokens: Token[], open: number, left: string, right: string): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i]!.text === left) depth++;
    else if (tokens[i]!.text === right && --depth === 0) return i;
  }
  return refuse(`unclosed "${left}"`);
}

/** `{a="1", namespace=~".*", "name"}` → the caller's matchers but namespace's, then the enforced one. */
function matcherList(inner: Token[], enforced: string): string {
  const kept: string[] = [];
  let item: Token[] = [];
  const flush = () => {
    if (item.length === 0) return;
    const label = item[0]!;
    const name = label.kind === 'string' ? unquote(label.text) : label.text;
    const isMatcher =
      item.length === 3 && ['=', '!=', '=~', '!~'].includes(item[1]!.text) && item[2]!.kind === 'string';
    const isName = item.length === 1 && label.kind === 'string';
    if (!isMatcher && !isName) refuse('a label matcher must be <label> <op> "<value>"');
    if (!(isMatcher && name === 'namespace')) kept.push(item.map((t) => t.text).join(''));
    item = [];
  };
  for (const token of inner) {
    if (token.text === ',') flush();
    else item.push(token);
  }
  flush();
  return `{${[...kept, enforced].join(', ')}}`;
}

function unquote(text: string): string {
  if (text.startsWith('`')) return text.slice(1, -1);
  try {
    return JSON.parse(text.startsWith("'") ? `"${text.slice(1, -1).replace(/"/g, '\\"')}"` : text) as string;
  } catch {
    return text.slice(1, -1);
  }
}

function refuse(why: string): never {
  throw new ApiError('BadRequest', `the query cannot be confined to the namespace: ${why}`);
}
