import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import express, { Router } from 'express';
import { enteredForItsPaths, servedUnder, type GuardedRouter } from '../../src/http/path-guard.ts';
import { whileServing } from '../support/serving.ts';

/** An app with the guarded routers, then a fallback naming the path. */
async function serve(routers: Router[], run: (get: (path: string) => Promise<string>) => Promise<void>) {
  const app = express();
  for (const router of routers) app.use(enteredForItsPaths(router));
  app.use((req, res) => {
    res.status(404).send(`fallback ${req.path}`);
  });
  await whileServing(app, (url) => run(async (path) => (await fetch(`${url}${path}`)).text()));
}

describe('routers entered only for their paths', () => {
  test('a router of routes serves its paths, in any case; other paths pass it', async () => {
    const router = Router();
    router.get('/kapis/things/v1/items', (_req, res) => void res.send('items'));
    router.get('/kapis/things/v1/items/:name', (req, res) => void res.send(`item ${req.params['name']}`));
    router.get('/healthz', (_req, res) => void res.send('ok'));
    await serve([router], async (get) => {
      assert.equal(await get('/kapis/things/v1/items'), 'items');
      assert.equal(await get('/KAPIS/Things/v1/items/a'), 'item a');
      assert.equal(await get('/healthz'), 'ok');
      assert.equal(await get('/kapis/other/v1/items'), 'fallback /kapis/other/v1/items');
      assert.equal(await get('/api/v1/nodes'), 'fallback /api/v1/nodes');
    });
  });

  test('the router is entered only when a route’s literal prefix starts the path', () => {
    const entered: string[] = [];
    // A stand-in router: its routes as Express lists them, and a record of each entry.
    const router = Object.assign(
      (req: { path: string }) => {
        entered.push(req.path);
      },
      { stack: [{ route: { path: '/kapis/things/v1/items/:name' } }, { route: { path: '/healthz' } }] },
    ) as unknown as Router;
    const guarded = enteredForItsPaths(router);
    const passed: string[] = [];
    for (const path of ['/kapis/things/v1/items/a', '/Healthz', '/kapis/things/v1', '/api/v1/nodes', '/']) {
      guarded({ path } as never, {} as never, () => passed.push(path));
    }
    assert.deepEqual(entered, ['/kapis/things/v1/items/a', '/Healthz']);
    // Passed on at once, in the same turn: no setImmediate of an exhausted router.
    assert.deepEqual(passed, ['/kapis/things/v1', '/api/v1/nodes', '/']);
  });

  test('a router with middleware is entered for the prefixes it declares, or for every path', async () => {
    const seen: string[] = [];
    const declared = Router();
    declared.get('/oauth/token', (_req, res) => void res.send('token'));
    declared.use((req, _res, next) => {
      seen.push(`declared ${req.path}`);
      next();
    });
    const undeclared = Router();
    undeclared.use((req, _res, next) => {
      seen.push(`undeclared ${req.path}`);
      next();
    });
    await serve([servedUnder(declared, ['/OAuth/']), undeclared], async (get) => {
      assert.equal(await get('/oauth/token'), 'token');
      assert.equal(await get('/oauth/nothing'), 'fallback /oauth/nothing');
      assert.equal(await get('/api/v1'), 'fallback /api/v1');
    });
    assert.deepEqual(seen, ['declared /oauth/nothing', 'undeclared /oauth/nothing', 'undeclared /api/v1']);
  });

  test('the guarded router stays reachable for tools that list routes', () => {
    const router = Router().get('/healthz', (_req, res) => void res.send('ok'));
    const guarded = enteredForItsPaths(router) as GuardedRouter;
    assert.equal(guarded.router, router);
    const undeclared = Router().use((_req, _res, next) => next());
    assert.equal(enteredForItsPaths(undeclared), undeclared);
  });
});
