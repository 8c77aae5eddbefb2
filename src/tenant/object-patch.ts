import { ApiError } from '../kernel/api-error.ts';

/**
 * Patches applied here rather than by the kube-apiserver, where the server must see the patched object
 * before it is written (a namespace's workspace label decides who may write it). The result is then
 * written with its resourceVersion, so a concurrent change is a 409, never lost.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** RFC 7386: objects merge key by key, `null` removes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return structuredClone(patch);
  const result: Record<string, unknown> = isObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

/** RFC 6902 (add, remove, replace, move, copy, test). A bad or failing operation is a 400 naming it. */
export function applyJsonPatch(target: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badPatch('a JSON patch is an array of operations');
  let doc = structuredClone(target);
  patch.forEach((raw: unknown, index) => {
    const op = operation(raw, index);
    const where = `operation ${index} (${op.op} ${op.path})`;
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, structuredClone(op.value), where);
        break;
      case 'remove':
        doc = remove(doc, op.path, where).doc;
        break;
      case 'replace':
        doc = add(remove(doc, op.path, where).doc, op.path, structuredClone(op.value), where);
        break;
      case 'move': {
        const taken = remove(doc, op.from!, where);
        doc = add(taken.doc, op.path, taken.value, where);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, structuredClone(get(doc, op.from!, where)), where);
        break;
      case 'test':
        if (JSON.stringify(get(doc, op.path, where)) !== JSON.stringify(op.value))
          throw badPatch(`${where}: the test failed`);
        break;
    }
  });
  return doc;
}

function operation(raw: unknown, index: number): Operation {
  if (!isObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string')
    throw badPatch(`operation ${index} needs a string "op" and "path"`);
  const op = raw['op'];
  if (!['add', 'remove', 'replace', 'move', 'copy', 'test'].includes(op))
    throw badPatch(`operation ${index}: unknown op "${op}"`);
  if (['move', 'copy'].includes(op) && typeof raw['from'] !== 'string')
    throw badPatch(`operation ${index} (${op}) needs a string "from"`);
  if (['add', 'replace', 'test'].includes(op) && !('value' in raw))
    throw badPatch(`operation ${index} (${op}) needs a "value"`);
  return raw as unknown as Operation;
}

/** The reference tokens of a JSON pointer (RFC 6901). */
function tokens(pointer: string, where: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw badPatch(`${where}: "${pointer}" is not a JSON pointer`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function get(doc: unknown, pointer: string, where: string): unknown {
  let node = doc;
  for (const token of tokens(pointer, where)) {
    const next = child(node, token);
    if (next === undefined) throw badPatch(`${where}: ${pointer} does not exist`);
    node = next;
  }
  return node;
}

function child(node: unknown, token: string): unknown {
  if (Array.isArray(node)) return /^(0|[1-9]\d*)$/.test(token) ? node[Number(token)] : undefined;
  if (isObject(node)) return Object.hasOwn(node, token) ? node[token] : undefined;
  return undefined;
}

function add(doc: unknown, pointer: string, value: unknown, where: string): unknown {
  const path = tokens(pointer, where);
  if (path.length === 0) return value;
  const last = path.pop()!;
  const parent = get(doc, path.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''), where);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!/^(0|[1-9]\d*|-)$/.test(last) || index > parent.length)
      throw badPatch(`${where}: index ${last} is out of range`);
    parent.splice(index, 0, value);
  } else if (isObject(parent)) {
    parent[last] = value as Json;
  } else {
    throw badPatch(`${where}: the parent of ${pointer} is not an object or array`);
  }
  return doc;
}

function remove(doc: unknown, pointer: string, where: string): { doc: unknown; value: unknown } {
  const path = tokens(pointer, where);
  if (path.length === 0) throw badPatch(`${where}: the whole document cannot be removed`);
  const value = get(doc, pointer, where);
  const last = path.pop()!;
  const parent = get(doc, path.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''), where);
  if (Array.isArray(parent)) parent.splice(Number(last), 1);
  else delete (parent as Record<string, unknown>)[last];
  return { doc, value };
}

function badPatch(message: string): ApiError {
  return new ApiError('BadRequest', `invalid patch: ${message}`);
}
