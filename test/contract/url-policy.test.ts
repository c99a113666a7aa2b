import { describe, expect, it } from 'vitest';
import { checkUrl, classifyHost } from '../../src/contract/index.js';

const refused = (url: string, policy = {}) => {
  const r = checkUrl(url, policy);
  return r.ok ? undefined : r.expected;
};

describe('checkUrl (SSRF policy)', () => {
  it('accepts public http and https URLs and returns them normalised', () => {
    expect(checkUrl('https://hooks.example.com/dlr?x=1')).toEqual({ ok: true, value: 'https://hooks.example.com/dlr?x=1' });
    expect(checkUrl('HTTP://Hooks.Example.COM')).toEqual({ ok: true, value: 'http://hooks.example.com/' });
    expect(checkUrl('https://8.8.8.8:8443/x')).toEqual({ ok: true, value: 'https://8.8.8.8:8443/x' });
    expect(checkUrl('https://[2606:4700::1111]/')).toEqual({ ok: true, value: 'https://[2606:4700::1111]/' });
  });

  it('refuses relative URLs and other schemes', () => {
    expect(refused('/callback')).toContain('absolute');
    expect(refused('ftp://example.com/')).toContain('not ftp');
    expect(refused('javascript:alert(1)')).toBeDefined();
    expect(refused('file:///etc/passwd')).toBeDefined();
    expect(refused('gopher://example.com:25/')).toBeDefined();
  });

  it('refuses credentials in the URL', () => {
    expect(refused('https://user:secret@example.com/')).toContain('credentials');
    expect(refused('https://user@example.com/')).toContain('credentials');
  });

  it('refuses spaces and control characters that parsers would silently drop', () => {
    expect(refused(' https://example.com/')).toBeDefined();
    expect(refused('https://exam\tple.com/')).toBeDefined();
    expect(refused('https://example.com/\n')).toBeDefined();
  });

  it('refuses loopback in every spelling: name, literal, decimal, octal, hex, short, IPv6, mapped', () => {
    for (const url of [
      'http://localhost/',
      'http://LOCALHOST./',
      'http://api.localhost/',
      'http://127.0.0.1/',
      'http://127.1/',
      'http://2130706433/',
      'http://0177.0.0.1/',
      'http://0x7f.0.0.1/',
      'http://0x7f000001/',
      'http://[::1]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      expect(refused(url), url).toMatch(/loopback|local name/);
    }
  });

  it('refuses unspecified, private, shared, link-local and metadata addresses', () => {
    expect(refused('http://0.0.0.0/')).toContain('unspecified');
    expect(refused('http://0/')).toContain('unspecified');
    expect(refused('http://[::]/')).toContain('unspecified');
    expect(refused('http://10.1.2.3/')).toContain('private');
    expect(refused('http://172.16.0.1/')).toContain('private');
    expect(refused('http://172.31.255.255/')).toContain('private');
    expect(refused('http://192.168.1.1/')).toContain('private');
    expect(refused('http://100.64.0.1/')).toContain('shared');
    expect(refused('http://169.254.1.1/')).toContain('link-local');
    expect(refused('http://[fe80::1]/')).toContain('link-local');
    expect(refused('http://[fd12:3456::1]/')).toContain('private');
    expect(refused('http://[::ffff:10.0.0.1]/')).toContain('private');
    expect(refused('http://[64:ff9b::a00:1]/')).toContain('private');
    expect(refused('http://[2002:a00:1::]/')).toContain('private');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/', 'http://2852039166/']) {
      expect(refused(url), url).toContain('metadata');
    }
  });

  it('refuses single-label and private-use names', () => {
    expect(refused('http://intranet/')).toContain('local name');
    expect(refused('http://printer.local/')).toContain('local name');
    expect(refused('http://db.internal/')).toContain('local name');
    expect(refused('http://router.home.arpa/')).toContain('local name');
  });

  it('keeps public neighbours of private ranges', () => {
    expect(classifyHost('172.15.255.255')).toBe('public');
    expect(classifyHost('172.32.0.0')).toBe('public');
    expect(classifyHost('100.128.0.1')).toBe('public');
    expect(classifyHost('11.0.0.1')).toBe('public');
  });

  it('options: allowPrivateHosts lets private hosts through but never metadata; allowedHosts lets one host through', () => {
    expect(checkUrl('http://localhost:8080/hook', { allowPrivateHosts: true }).ok).toBe(true);
    expect(checkUrl('http://10.0.0.5/hook', { allowPrivateHosts: true }).ok).toBe(true);
    expect(checkUrl('http://169.254.169.254/', { allowPrivateHosts: true }).ok).toBe(false);
    expect(checkUrl('http://127.0.0.1:9000/', { allowedHosts: ['127.0.0.1'] }).ok).toBe(true);
    expect(checkUrl('http://127.0.0.2:9000/', { allowedHosts: ['127.0.0.1'] }).ok).toBe(false);
  });

  it('refuses URLs longer than 2048 characters', () => {
    expect(refused(`https://example.com/${'a'.repeat(2048)}`)).toContain('2048');
  });
});

describe('metadata and trailing dots', () => {
  it('refuses cloud metadata in every embedded IPv4 form, even when private hosts are allowed', () => {
    for (const url of ['http://[::ffff:a9fe:a9fe]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::]/', 'http://169.254.169.254/latest/']) {
      const check = checkUrl(url, { allowPrivateHosts: true });
      expect(check.ok, url).toBe(false);
      expect(check.ok ? '' : check.expected).toContain('metadata');
    }
  });

  it('sees through any number of trailing dots', () => {
    for (const url of ['http://localhost../', 'http://127.0.0.1.../hook']) expect(checkUrl(url).ok, url).toBe(false);
    expect(checkUrl('https://example.com./hook').ok).toBe(true);
  });
});
