import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Informer, type ListResult, type WatchEvent, type WatchFn } from '../../src/cluster/informer.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { waitFor } from '../cluster/wait-for.ts';
import { Writable } from 'node:stream';

const silent = createLogger({ level: 'error', stream: new Writable({ write: (_c, _e, cb) => cb() }) });

function obj(name: string, rv: string, extra: Record<string, unknown> = {}): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, resourceVersion: rv, managedFields: [{ manager: 'x' }] } as never,
    ...extra,
  };
}

/** A scripted apiserver: lists return `state`; watches are opened on demand and driven by the test. */
function fakeServer(initial: KubernetesObject[], listRv = '10') {
  const calls = { lists: 0, watches: [] as { resourceVersion: string }[] };
  let items = initial;
  let rv = listRv;
  let failListsLeft = 0;
  const open: { emit(e: WatchEvent): void; close(err?: unknown): void }[] = [];
  const list = async (): Promise<ListResult<KubernetesObject>> => {
    calls.lists++;
    if (failListsLeft > 0) {
      failListsLeft--;
      throw new Error('connection refused');
    }
    return { items, metadata: { resourceVersion: rv } };
  };
  let heldWatch: Promise<void> | undefined;
  const watch: WatchFn = async (query, onEvent, onDone) => {
    calls.watches.push({ resourceVersion: query.resourceVersion });
    const held = heldWatch;
    heldWatch = undefined;
    if (held) await held;
    let closed = false;
    const handle = {
      emit: (e: WatchEvent) => !closed && onEvent(e),
      close: (err?: unknown) => {
        if (!closed) {
          closed = true;
          onDone(err ?? null);
        }
      },
    };
    open.push(handle);
    return { abort: () => handle.close() };
  };
  return {
    calls,
    list,
    watch,
    latest: () => open[open.length - 1]!,
    watchCount: () => open.length,
    setState(next: KubernetesObject[], nextRv: string) {
      items = next;
      rv = nextRv;
    },
    failNextLists(n: number) {
      failListsLeft = n;
    },
    /** The next watch request is answered only when the returned function is called. */
    holdNextWatch(): () => void {
      let release!: () => void;
      heldWatch = new Promise<void>((resolve) => (release = resolve));
      return release;
    },
  };
}

function informerOn(server: ReturnType<typeof fakeServer>, now?: () => number) {
  return new Informer<KubernetesObject>({
    kind: 'nodes',
    list: server.list,
    watch: server.watch,
    logger: silent,
    initialBackoffMs: 1,
    maxBackoffMs: 5,
    transform: (o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }),
    ...(now ? { now } : {}),
  });
}

describe('informer', () => {
  test('lists, then applies watch events from the list resourceVersion; objects are frozen and transformed', async () => {
    const server = fakeServer([obj('a', '5'), obj('b', '6')]);
    const informer = informerOn(server);
    const events: string[] = [];
    informer.onEvent((type, o) => events.push(`${type} ${o.metadata?.name}`));
    informer.start();
    await informer.waitForSynced(1000);
    await waitFor('watch opened', () => (server.watchCount() === 1 ? true : undefined));
    assert.equal(server.calls.watches[0]!.resourceVersion, '10');
    assert.deepEqual(events, ['ADDED a', 'ADDED b']);
    assert.equal(informer.get('a')?.metadata?.managedFields, undefined);
    assert.ok(Object.isFrozen(informer.get('a')!.metadata));

    server.latest().emit({ type: 'MODIFIED', object: obj('a', '11', { spec: { unschedulable: true } }) });
    server.latest().emit({ type: 'ADDED', object: obj('c', '12') });
    server.latest().emit({ type: 'DELETED', object: obj('b', '13') });
    server.latest().emit({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '20' } } });
    assert.deepEqual(events.slice(2), ['MODIFIED a', 'ADDED c', 'DELETED b']);
    assert.deepEqual(
      informer
        .list()
        .map((o) => o.metadata?.name)
        .sort(),
      ['a', 'c'],
    );
    assert.equal(informer.resourceVersion, '20');

    // A normal server-side close resumes from the last resourceVersion without a relist.
    server.latest().close();
    await waitFor('watch resumed', () => (server.watchCount() === 2 ? true : undefined));
    assert.equal(server.calls.watches[1]!.resourceVersion, '20');
    assert.equal(server.calls.lists, 1);
    await informer.stop();
  });

  test('whenSynced calls back once, at the first sync (at once when already synced); cancelled, never', async () => {
    const server = fakeServer([obj('a', '5')]);
    const informer = informerOn(server);
    const calls: string[] = [];
    informer.whenSynced(() => calls.push(`first, synced=${informer.synced}, size=${informer.size}`));
    const cancel = informer.whenSynced(() => calls.push('cancelled'));
    cancel();
    informer.start();
    await informer.waitForSynced(1000);
    informer.whenSynced(() => calls.push('after'));
    assert.deepEqual(calls, ['first, synced=true, size=1', 'after']);
    await informer.stop();
  });

  test('410 Gone relists and reports the difference as events', async () => {
    const server = fakeServer([obj('a', '5'), obj('b', '6')]);
    const informer = informerOn(server);
    informer.start();
    await informer.waitForSynced(1000);
    await waitFor('watch opened', () => (server.watchCount() === 1 ? true : undefined));
    const events: string[] = [];
    informer.onEvent((type, o) => events.push(`${type} ${o.metadata?.name}`));
    server.setState([obj('a', '30'), obj('c', '31')], '40');
    server
      .latest()
      .emit({ type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
    await waitFor('relisted and rewatched', () => (server.watchCount() === 2 ? true : undefined));
    assert.equal(server.calls.lists, 2);
    assert.equal(server.calls.watches[1]!.resourceVersion, '40');
    assert.deepEqual(events.sort(), ['ADDED c', 'DELETED b', 'MODIFIED a']);
    await informer.stop();
  });

  test('errors back off and retry; stale data is served and its age reported until the watch is back', async () => {
    let clock = 1_000_000;
    const server = fakeServer([obj('a', '5')]);
    const informer = informerOn(server, () => clock);
    informer.start();
    await informer.waitForSynced(1000);
    await waitFor('watch opened', () => (server.watchCount() === 1 ? true : undefined));
    assert.deepEqual(informer.freshness(), { connected: true, staleSeconds: 0 });

    server.failNextLists(2);
    server.latest().close(new Error('ECONNRESET'));
    clock += 7_000;
    assert.equal(informer.get('a')?.metadata?.name, 'a', 'last known state is still served');
    await waitFor('reconnected', () =>
      server.watchCount() >= 2 && informer.freshness().connected ? true : undefined,
    );
    assert.ok(informer.synced);
    await informer.stop();
  });

  test('the hand-overs from a list to its watch and from a closed watch to the next are no outage', async () => {
    const server = fakeServer([obj('a', '5')]);
    let release = server.holdNextWatch();
    const informer = informerOn(server);
    informer.start();
    await informer.waitForSynced(1000);
    await waitFor('watch asked for', () => (server.calls.watches.length === 1 ? true : undefined));
    assert.deepEqual(
      informer.freshness(),
      { connected: true, staleSeconds: 0 },
      'listed, watch not open yet',
    );
    release();
    await waitFor('watch opened', () => (server.watchCount() === 1 ? true : undefined));
    // The server ends the watch at its timeout; the next one is slow to answer.
    release = server.holdNextWatch();
    server.latest().close();
    await waitFor('next watch asked for', () => (server.calls.watches.length === 2 ? true : undefined));
    assert.deepEqual(informer.freshness(), { connected: true, staleSeconds: 0 }, 'between two watches');
    release();
    // A failure is an outage, until a watch is open again.
    await waitFor('next watch opened', () => (server.watchCount() === 2 ? true : undefined));
    release = server.holdNextWatch();
    server.latest().close(new Error('ECONNRESET'));
    await waitFor('reconnecting', () => (server.calls.watches.length === 3 ? true : undefined));
    assert.equal(informer.freshness().connected, false);
    release();
    await waitFor('reconnected', () => (informer.freshness().connected ? true : undefined));
    await informer.stop();
  });

  test('staleness grows while disconnected', async () => {
    let clock = 5_000_000;
    const server = fakeServer([obj('a', '5')]);
    const informer = informerOn(server, () => clock);
    informer.start();
    await waitFor('watch opened', () => (server.watchCount() === 1 ? true : undefined));
    await waitFor('connected', () => (informer.freshness().connected ? true : undefined));
    await informer.stop();
    clock += 42_000;
    assert.deepEqual(informer.freshness(), { connected: false, staleSeconds: 42 });
  });

  test('waitForSynced rejects after its deadline when the apiserver never answers', async () => {
    const server = fakeServer([]);
    server.failNextLists(1_000_000);
    const informer = informerOn(server);
    informer.start();
    await assert.rejects(informer.waitForSynced(50), /nodes cache not synced within 50 ms/);
    assert.equal(informer.synced, false);
    await informer.stop();
  });
});
