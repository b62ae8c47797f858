import { describe, expect, it } from 'vitest';
import { ROUTES, matchRoute, routeRequest } from '../../src/api/routes.ts';

/** The one route table both hosts adapt: what each method and path is, by the table alone. */
describe('matchRoute', () => {
  it.each([
    ['POST', '/v1/query', 'query', ''],
    ['GET', '/healthz', 'health', ''],
    ['HEAD', '/healthz', 'health', ''],
    ['GET', '/v1/openapi.json', 'openapi', ''],
    ['GET', '/v1/export', 'export', ''],
    ['GET', '/v1/changes', 'changes', ''],
    ['GET', '/v1/feed', 'feed', ''],
    ['GET', '/snapshot/manifest.json', 'snapshot-files', 'manifest.json'],
    ['HEAD', '/snapshot/records/a%20b.json', 'snapshot-files', 'records/a%20b.json'],
    ['GET', '/snapshot/', 'snapshot-files', ''],
  ])('%s %s is the route %s', (method, path, id, rest) => {
    const match = matchRoute(method, path);
    expect(match.kind).toBe('route');
    if (match.kind === 'route') expect({ id: match.route.id, rest: match.rest }).toEqual({ id, rest });
  });

  it('answers the preflight of a route that has one', () => {
    expect(matchRoute('OPTIONS', '/v1/query')).toEqual({
      kind: 'preflight',
      headers: {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': 'POST, OPTIONS',
        'Access-Control-Allow-Headers': 'Content-Type',
        'Access-Control-Max-Age': '86400',
      },
    });
  });

  it.each(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH'])('refuses %s /v1/query with 405 and its Allow header', (method) => {
    const match = matchRoute(method, '/v1/query');
    expect(match.kind).toBe('refuse');
    if (match.kind !== 'refuse') return;
    expect(match.error.code).toBe('method_not_allowed');
    expect(match.error.headers).toEqual({ Allow: 'POST, OPTIONS' });
    expect(match.error.message).toBe(`${method} is not allowed on /v1/query; send a POST.`);
  });

  it.each([
    ['DELETE', '/healthz'],
    ['POST', '/v1/export'],
    ['OPTIONS', '/healthz'],
    ['GET', '/v1/query/extra'],
    ['GET', '/healthz/'],
    ['GET', '/snapshot'],
    ['GET', '/'],
  ])('matches nothing for %s %s (static files, then 404)', (method, path) => {
    expect(matchRoute(method, path)).toEqual({ kind: 'none' });
  });

  it('has one entry per path, each path exact or a prefix ending in /*', () => {
    const paths = ROUTES.map((r) => r.path);
    expect(new Set(paths).size).toBe(paths.length);
    for (const p of paths) expect(p).toMatch(/^\/[^*]*(\/\*)?$/);
  });
});

describe('routeRequest', () => {
  it('splits the path from the query string and reads headers', () => {
    const request = routeRequest('GET', '/v1/export?query=valve&limit=5', '', (name) => (name === 'accept' ? 'text/csv' : undefined), 'http://localhost');
    expect(request.path).toBe('/v1/export');
    expect(request.url).toBe('/v1/export?query=valve&limit=5');
    expect(Object.fromEntries(request.query)).toEqual({ query: 'valve', limit: '5' });
    expect(request.header('accept')).toBe('text/csv');
  });
});
