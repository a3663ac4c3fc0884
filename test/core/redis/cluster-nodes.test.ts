import { ConfigError, loadConfig } from '../../../src/core/config';
import { ClusterNodesError, parseClusterNodes } from '../../../src/core/redis/cluster-nodes';

describe('parseClusterNodes', () => {
  test('host:port entries, spaces and empty entries ignored, duplicates once', () => {
    expect(parseClusterNodes(' redis-1.internal:6379, 10.0.0.2:7000,,redis-1.internal:6379 ')).toEqual({
      nodes: [
        { host: 'redis-1.internal', port: 6379 },
        { host: '10.0.0.2', port: 7000 },
      ],
      tls: false,
      username: undefined,
      password: undefined,
    });
  });

  test('IPv6 in brackets', () => {
    expect(parseClusterNodes('[::1]:7001,[fd00::2]:7002').nodes).toEqual([
      { host: '::1', port: 7001 },
      { host: 'fd00::2', port: 7002 },
    ]);
  });

  test('redis:// and rediss:// URLs carry credentials and TLS; the port defaults to 6379', () => {
    expect(parseClusterNodes('rediss://app:s%40cret@a.example:7000,rediss://app:s%40cret@b.example')).toEqual({
      nodes: [
        { host: 'a.example', port: 7000 },
        { host: 'b.example', port: 6379 },
      ],
      tls: true,
      username: 'app',
      password: 's@cret',
    });
    expect(parseClusterNodes('redis://:pw@[::1]:7000')).toMatchObject({ nodes: [{ host: '::1', port: 7000 }], tls: false, username: undefined, password: 'pw' });
  });

  test.each([
    ['', /no node given/],
    [' , ', /no node given/],
    ['redis-1', /"redis-1" is not host:port \(e\.g\. REDIS_CLUSTER_NODES=/],
    ['redis-1:', /is not host:port/],
    ['redis-1:6379:1', /is not host:port/],
    ['::1:6379', /is not host:port/],
    ['a b:6379', /is not host:port/],
    ['redis-1:0', /the port must be from 1 to 65535/],
    ['redis-1:65536', /the port must be from 1 to 65535/],
    ['http://redis-1:6379', /only redis:\/\/ and rediss:\/\/ URLs/],
    ['redis://redis-1:6379/2', /without a database number or options/],
    ['redis://redis-1:6379?tls=true', /without a database number or options/],
    ['redis://a:6379,rediss://b:6379', /all redis:\/\/ or all rediss:\/\//],
    ['redis://u:p@a:6379,b:6379', /with the same credentials/],
  ])('refuses %p', (text, message) => {
    expect(() => parseClusterNodes(text)).toThrow(ClusterNodesError);
    expect(() => parseClusterNodes(text)).toThrow(message);
  });

  test('an error never shows a password', () => {
    expect(() => parseClusterNodes('redis://app:hunter2@a:6379/3')).toThrow(/"redis:\/\/app:\*\*\*@a:6379\/3"/);
    expect(() => parseClusterNodes('redis://app:hunter2@a:6379/3')).not.toThrow(/hunter2/);
  });
});

describe('REDIS_CLUSTER_NODES in the config', () => {
  test('unset, or empty: no cluster', () => {
    expect(loadConfig({}).redisCluster).toBeUndefined();
    expect(loadConfig({ REDIS_CLUSTER_NODES: '' }).redisCluster).toBeUndefined();
  });

  test('parsed once, frozen', () => {
    const { redisCluster, redisUrl } = loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000,127.0.0.1:7001', REDIS_PREFIX: '{tributary}' });
    expect(redisUrl).toBeUndefined();
    expect(redisCluster?.nodes).toEqual([
      { host: '127.0.0.1', port: 7000 },
      { host: '127.0.0.1', port: 7001 },
    ]);
    expect(Object.isFrozen(redisCluster)).toBe(true);
    expect(Object.isFrozen(redisCluster?.nodes)).toBe(true);
  });

  test('a bad list is refused at boot, naming the variable and the entry', () => {
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000,redis-2' })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_CLUSTER_NODES: '127.0.0.1:7000,redis-2' })).toThrow(/^Invalid environment: REDIS_CLUSTER_NODES: "redis-2" is not host:port/);
  });

  test('one shard on a cluster needs a hash tag in the prefix; several shards tag their keys themselves', () => {
    const nodes = { REDIS_CLUSTER_NODES: '127.0.0.1:7000' };
    expect(() => loadConfig(nodes)).toThrow(/REDIS_SHARDS=1 every key must share one slot.*set REDIS_PREFIX=\{tributary\}, or set REDIS_SHARDS to more than 1/);
    expect(() => loadConfig({ ...nodes, REDIS_PREFIX: '{}tributary' })).toThrow(/must share one slot/);
    expect(loadConfig({ ...nodes, REDIS_PREFIX: '{tributary}' }).redisPrefix).toBe('{tributary}');
    expect(loadConfig({ ...nodes, REDIS_PREFIX: 'app:{tributary}' }).redisPrefix).toBe('app:{tributary}');
    expect(loadConfig({ ...nodes, REDIS_SHARDS: '3' }).keyspace.shards).toBe(3);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisPrefix).toBe('tributary');
  });

  test('REDIS_URL and REDIS_CLUSTER_NODES together are refused', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' })).toThrow(/set REDIS_URL \(one Redis\) or REDIS_CLUSTER_NODES \(a Redis Cluster\), not both/);
  });
});
