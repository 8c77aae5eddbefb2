import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import express, { Router } from 'express';
import { routedByPath, servedUnder } from '../../src/http/path-guard.ts';
import { whileServing } from '../support/serving.ts';

/** An app with the routers as one layer, then a fallback naming the path, then an error handler. */
async function serve(routers: Router[], run: (get: (path: string) => Promise<string>) => Promise<void>) {
  const app = express();
  app.use(routedByPath(routers));
  app.use((req, res) => {
    res.status(404).send(`fallback ${req.path}`);
  });
  app.use((err: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).send(`error ${err.message}`);
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

  test('a router is entered only when a route’s literal prefix starts the path, in the routers’ order', () => {
    const entered: string[] = [];
    // Stand-in routers: their routes as Express lists them, and a record of each entry; they pass it on.
    const standIn = (name: string, paths: string[]) =>
      Object.assign(
        (req: { path: string }, _res: unknown, next: () => void) => {
          entered.push(`${name} ${req.path}`);
          next();
        },
        { stack: paths.map((path) => ({ route: { path } })) },
      ) as unknown as Router;
    const dispatch = routedByPath([
      standIn('first', ['/kapis/things/v1/items/:name', '/healthz']),
      standIn('second', ['/kapis/things/v1/items', '/api/{*rest}']),
    ]);
    const passed: string[] = [];
    for (const path of ['/kapis/things/v1/items/a', '/Healthz', '/kapis/things/v1', '/api/v1/nodes', '/']) {
      dispatch({ path } as never, {} as never, () => passed.push(path));
    }
    assert.deepEqual(entered, [
      'first /kapis/things/v1/items/a',
      'second /kapis/things/v1/items/a',
      'first /Healthz',
      'second /api/v1/nodes',
    ]);
    // Every path passed on at once, in the same turn: no setImmediate of an exhausted router.
    assert.deepEqual(passed, [
      '/kapis/things/v1/items/a',
      '/Healthz',
      '/kapis/things/v1',
      '/api/v1/nodes',
      '/',
    ]);
  });

  test('an error from a router goes to the error handlers, past the routers after it', async () => {
    const failing = Router().get('/kapis/things/v1/items', () => {
      throw new Error('boom');
    });
    const later = Router().get('/kapis/things/v1/items', (_req, res) => void res.send('later'));
    const passing = Router().get('/kapis/things/v1/items', (_req, _res, next) => next());
    await serve([failing, later], async (get) => {
      assert.equal(await get('/kapis/things/v1/items'), 'error boom');
    });
    await serve([passing, later], async (get) => {
      assert.equal(await get('/kapis/things/v1/items'), 'later');
    });
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

  test('the routers stay reachable for tools that list routes', () => {
    const router = Router().get('/healthz', (_req, res) => void res.send('ok'));
    const undeclared = Router().use((_req, _res, next) => next());
    assert.deepEqual(routedByPath([router, undeclared]).routers, [router, undeclared]);
  });

  test('a GET of a literal route calls its handler without entering its router; other requests enter it', async () => {
    let entered = 0;
    const router = Router();
    router.get('/kapis/things/v1/items', (req, res) => void res.send(`items ${req.route.path}`));
    router.get('/kapis/things/v1/items/:name', (req, res) => void res.send(`item ${req.params['name']}`));
    // The router as the app sees it, counting its entries.
    const counted = Object.assign(
      (req: express.Request, res: express.Response, next: express.NextFunction) => {
        entered++;
        router(req, res, next);
      },
      { stack: router.stack },
    ) as unknown as Router;
    await serve([counted], async (get) => {
      assert.equal(await get('/kapis/things/v1/items?limit=1'), 'items /kapis/things/v1/items');
      assert.equal(await get('/KAPIS/things/v1/Items'), 'items /kapis/things/v1/items');
      assert.equal(entered, 0);
      assert.equal(await get('/kapis/things/v1/items/a'), 'item a');
      assert.equal(entered, 1);
    });
  });

  test('a literal route is not direct where Express would answer otherwise', async () => {
    // A router before it that can take the path: its route answers first.
    const earlier = Router().get(
      '/kapis/things/v1/:what',
      (req, res) => void res.send(`earlier ${req.params['what']}`),
    );
    const later = Router().get('/kapis/things/v1/items', (_req, res) => void res.send('later'));
    // In its own router, another layer that takes the path first.
    const shadowed = Router();
    shadowed.get('/kapis/other/v1/:what', (_req, res) => void res.send('param first'));
    shadowed.get('/kapis/other/v1/items', (_req, res) => void res.send('literal'));
    await serve([earlier, later, shadowed], async (get) => {
      assert.equal(await get('/kapis/things/v1/items'), 'earlier items');
      assert.equal(await get('/kapis/other/v1/items'), 'param first');
    });
  });

  test("a direct route's throw, rejection or pass goes where Express would send it", async () => {
    const router = Router();
    router.get('/kapis/a/v1/throws', () => {
      throw new Error('thrown');
    });
    router.get('/kapis/a/v1/rejects', async () => {
      await Promise.resolve();
      throw new Error('rejected');
    });
    router.get('/kapis/a/v1/passes', (_req, _res, next) => next('route'));
    const later = Router().get('/kapis/a/v1/passes', (_req, res) => void res.send('later'));
    await serve([router, later], async (get) => {
      assert.equal(await get('/kapis/a/v1/throws'), 'error thrown');
      assert.equal(await get('/kapis/a/v1/rejects'), 'error rejected');
      assert.equal(await get('/kapis/a/v1/passes'), 'later');
    });
  });
});
