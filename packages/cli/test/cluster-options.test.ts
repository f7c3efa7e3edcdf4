import { describe, expect, it } from 'vitest';
import {
  HTTP_HOST_DEFAULT,
  HTTP_PORT_DEFAULT,
  MEMBERS_MAX,
  UsageError,
  apiBaseUrl,
  httpListenOf,
  parseGrpcAddress,
  parseMemberId,
  parseMemberList,
} from '../src/index.js';

describe('httpListenOf', () => {
  it('takes flags over MQ_PORT/MQ_HOST over the defaults', () => {
    expect(httpListenOf({}, {})).toEqual({ host: HTTP_HOST_DEFAULT, port: HTTP_PORT_DEFAULT });
    expect(httpListenOf({}, { MQ_PORT: '9000', MQ_HOST: '0.0.0.0' })).toEqual({ host: '0.0.0.0', port: 9000 });
    expect(httpListenOf({ port: '9001', host: '::1' }, { MQ_PORT: 'bad', MQ_HOST: '' })).toEqual({ host: '::1', port: 9001 });
  });

  it('names the source of a bad value', () => {
    expect(() => httpListenOf({}, { MQ_PORT: '70000' })).toThrow(/MQ_PORT/);
    expect(() => httpListenOf({ port: 'x' }, {})).toThrow(/--port/);
    expect(() => httpListenOf({}, { MQ_HOST: '' })).toThrow(UsageError);
  });
});

describe('parseGrpcAddress', () => {
  it('accepts host:port, [v6]:port, and port 0 only for listen addresses', () => {
    expect(parseGrpcAddress('member1:7001', 'x')).toBe('member1:7001');
    expect(parseGrpcAddress('[::1]:7001', 'x')).toBe('[::1]:7001');
    expect(parseGrpcAddress('0.0.0.0:0', 'x', true)).toBe('0.0.0.0:0');
    for (const bad of ['member1', ':7001', 'a:0', 'a:65536', 'a:70x', '::1:7001', 'a b:1', 'a=b:1']) {
      expect(() => parseGrpcAddress(bad, 'x'), bad).toThrow(UsageError);
    }
  });
});

describe('parseMemberList', () => {
  it('parses id=host:port entries, ignoring spaces around them', () => {
    expect(parseMemberList('n1=a:7001, n2=b:7002 ,n3=c:7003', 'MQ_PEERS')).toEqual({ n1: 'a:7001', n2: 'b:7002', n3: 'c:7003' });
    expect(parseMemberList('mq-member-0=mq-member-0.mq-member:7001', 'x')).toEqual({ 'mq-member-0': 'mq-member-0.mq-member:7001' });
  });

  it('refuses entries without an id, bad ids, duplicates, bad addresses and too many members', () => {
    for (const bad of ['', 'n1', '=a:1', 'n 1=a:1', 'n1=a:1,n1=b:2', 'n1=a', 'n1=a:1,', 'n1=a:1;n2=b:2']) {
      expect(() => parseMemberList(bad, 'MQ_PEERS'), bad).toThrow(UsageError);
    }
    const many = Array.from({ length: MEMBERS_MAX + 1 }, (_, i) => `m${i}=h:${i + 1}`).join(',');
    expect(() => parseMemberList(many, 'x')).toThrow(/more than/);
  });
});

describe('parseMemberId and apiBaseUrl', () => {
  it('checks ids and brackets IPv6 hosts', () => {
    expect(parseMemberId('mq-member-0', 'x')).toBe('mq-member-0');
    expect(() => parseMemberId('a/b', 'x')).toThrow(UsageError);
    expect(() => parseMemberId('x'.repeat(65), 'x')).toThrow(UsageError);
    expect(apiBaseUrl('127.0.0.1', 8080)).toBe('http://127.0.0.1:8080/v1');
    expect(apiBaseUrl('::1', 8080)).toBe('http://[::1]:8080/v1');
  });
});
