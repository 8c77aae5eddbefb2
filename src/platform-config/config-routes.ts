import { Router } from 'express';
import type { Component } from './feature-flags.ts';
import type { PublicOAuthOptions } from './oauth-options.ts';

/** `/kapis/config.<platform>.io/v1alpha2`, where the original publishes what its console may know before login. */
export function configPrefix(platformName: string): string {
  return `/kapis/config.${platformName}.io/v1alpha2/configs`;
}

/**
 * The original's public configuration endpoints, served without a token (its console reads them before
 * login, and without a token on every page) and, like `/kapis/version`, without looking at one that is
 * sent. The answers are fixed for the life of the process: built once, by the caller.
 */
export function configRoutes(deps: {
  platformName: string;
  features: Record<Component, boolean>;
  oauth: PublicOAuthOptions;
}): Router {
  const router = Router();
  const prefix = configPrefix(deps.platformName);
  router.get(`${prefix}/configz`, (_req, res) => {
    res.set('Cache-Control', 'no-store').json(deps.features);
  });
  router.get(`${prefix}/oauth`, (_req, res) => {
    res.set('Cache-Control', 'no-store').json(deps.oauth);
  });
  // No GPU kinds are configured (the original's default): an empty list, not null.
  router.get(`${prefix}/gpu/kinds`, (_req, res) => {
    res.set('Cache-Control', 'no-store').json([]);
  });
  return router;
}
