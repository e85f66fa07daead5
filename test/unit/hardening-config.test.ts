import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientIpOf } from '../../schema/client-ip.js';
import { ConfigError, loadConfig } from '../../services/kernel/config.js';
import { OpenConnections } from '../../schema/graphql/live/ws-limits.js';
import { seriesSizeProblem } from '../../services/appointments/series.js';

const request = (peer: string, forwarded?: string | string[]) =>
  ({ socket: { remoteAddress: peer }, headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded } }) as unknown as IncomingMessage;

describe('limits configuration', () => {
  it('has limits on by default, TRUST_PROXY 0, and the documented values', () => {
    expect(loadConfig({})).toMatchObject({
      trustProxy: 0,
      rateLimits: { enabled: true, windowMs: 60_000, perIp: 300, listing: 60, reserve: 10, booking: 10, bookingsPerEmail: 5, emailWindowMs: 3_600_000, holdsPerClient: 3 },
      graphqlLimits: { maxDepth: 10, maxCost: 30_000, maxAliases: 15, maxDirectives: 20, maxTokens: 3000 },
      wsLimits: { maxPayloadBytes: 65_536, maxConnectionsPerIp: 50, maxConnections: 10_000 },
    });
  });

  it('reads every setting and refuses bad values naming them', () => {
    const config = loadConfig({ PUBLIC_RATE_LIMIT: 'off', TRUST_PROXY: '2', RATE_LIMIT_RESERVE: '4', HOLDS_PER_CLIENT: '1', RATE_LIMIT_WINDOW_SECONDS: '30', GRAPHQL_MAX_DEPTH: '7' });
    expect(config.rateLimits).toMatchObject({ enabled: false, reserve: 4, holdsPerClient: 1, windowMs: 30_000 });
    expect(config.trustProxy).toBe(2);
    expect(config.graphqlLimits.maxDepth).toBe(7);
    expect(() => loadConfig({ PUBLIC_RATE_LIMIT: 'maybe', TRUST_PROXY: '-1', HOLDS_PER_CLIENT: '0' })).toThrow(ConfigError);
    try {
      loadConfig({ PUBLIC_RATE_LIMIT: 'maybe', TRUST_PROXY: '-1', HOLDS_PER_CLIENT: '0' });
    } catch (error) {
      for (const name of ['PUBLIC_RATE_LIMIT', 'TRUST_PROXY', 'HOLDS_PER_CLIENT']) expect((error as Error).message).toContain(`  ${name}:`);
    }
  });

  it('refuses the development LINK_SIGNING_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/LINK_SIGNING_SECRET: must be set in production/);
    expect(loadConfig({ NODE_ENV: 'production', LINK_SIGNING_SECRET: 'a-real-secret-of-some-length' }).production).toBe(true);
  });
});

describe('clientIpOf', () => {
  it('ignores X-Forwarded-For with TRUST_PROXY 0', () => {
    expect(clientIpOf(request('::ffff:10.0.0.1', '1.2.3.4'), 0)).toBe('10.0.0.1');
    expect(clientIpOf(request('10.0.0.1'), 0)).toBe('10.0.0.1');
  });

  it('takes the entry the nearest trusted proxy appended; entries a client prepends are never reached', () => {
    // client sent "6.6.6.6", the proxy appended the client's real address 1.2.3.4
    expect(clientIpOf(request('10.0.0.1', '6.6.6.6, 1.2.3.4'), 1)).toBe('1.2.3.4');
    expect(clientIpOf(request('10.0.0.1', ['6.6.6.6', '1.2.3.4, 5.5.5.5']), 2)).toBe('1.2.3.4');
    // more hops trusted than the header has: the farthest known address
    expect(clientIpOf(request('10.0.0.1', '1.2.3.4'), 3)).toBe('1.2.3.4');
    // no header, or garbage in it: the peer
    expect(clientIpOf(request('10.0.0.1'), 1)).toBe('10.0.0.1');
    expect(clientIpOf(request('10.0.0.1', 'not-an-ip'), 1)).toBe('10.0.0.1');
  });
});

describe('OpenConnections', () => {
  it('caps per IP and per process and frees a place on close', () => {
    const open = new OpenConnections({ maxConnectionsPerIp: 2, maxConnections: 3 });
    open.opened('a');
    open.opened('a');
    expect(open.check('a')).toBe('ip');
    expect(open.check('b')).toBe('ok');
    open.opened('b');
    expect(open.check('c')).toBe('process');
    open.closed('a');
    expect(open.check('a')).toBe('ok');
    expect(open.size).toBe(2);
  });
});

describe('seriesSizeProblem (O(1), before expanding)', () => {
  const plan = (overrides: Partial<Parameters<typeof seriesSizeProblem>[0]> = {}) => ({
    windowStart: new Date('2027-01-01T08:00:00Z'),
    windowEnd: new Date('2027-01-01T09:00:00Z'),
    rangeStart: new Date('2027-01-01T00:00:00Z'),
    rangeEnd: new Date('2027-02-01T00:00:00Z'),
    raster: 30,
    weekdays: null,
    timeZone: 'UTC',
    ...overrides,
  });
  it('accepts a normal series and refuses what breaks a cap, quickly', () => {
    expect(seriesSizeProblem(plan())).toBeNull();
    expect(seriesSizeProblem(plan({ raster: 180 }))).toMatch(/^series_data.raster: 180 minutes do not fit the daily window of 60 minutes/);
    expect(seriesSizeProblem(plan({ rangeStart: new Date('0001-01-01T00:00:00Z'), rangeEnd: new Date('9999-12-31T00:00:00Z') }))).toMatch(/^series_data: a series may span at most 3660 days/);
    expect(seriesSizeProblem(plan({ windowEnd: new Date('2027-01-01T20:00:00Z'), raster: 15, rangeEnd: new Date('2028-01-01T00:00:00Z') }))).toMatch(/^a series may hold at most 2000/);
  });
});
