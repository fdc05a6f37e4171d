import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UrlPolicy, gdalPath } from '../src/upstream/url-policy.js';
import { TesseraError } from '../src/errors.js';

const refused = (fn: () => unknown, pattern: RegExp): void => {
  assert.throws(fn, (err: unknown) => err instanceof TesseraError && err.kind === 'BadRequest' && pattern.test(err.message));
};

describe('URL policy', () => {
  const open = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [] });

  it('allows http(s) and reads them through /vsicurl/', () => {
    assert.equal(gdalPath(open.resolve('https://example.com/a.tif')), '/vsicurl/https://example.com/a.tif');
  });

  it('refuses local files, file://, GDAL virtual paths and other schemes by default', () => {
    refused(() => open.resolve('/etc/passwd'), /local files are disabled/);
    refused(() => open.resolve('file:///etc/passwd'), /local files are disabled/);
    refused(() => open.resolve('/vsicurl/http://x/a.tif'), /virtual file systems/);
    refused(() => open.resolve('vsimem/x'), /virtual file systems/);
    refused(() => open.resolve('/vsizip//tmp/a.zip'), /virtual file systems/);
    refused(() => open.resolve('ftp://example.com/a.tif'), /scheme 'ftp'/);
    refused(() => open.resolve('s3://bucket/a.tif'), /not in the buckets TESSERA_ALLOWED_BUCKETS allows/);
    refused(() => open.resolve('az://container/a.tif'), /not in the buckets TESSERA_ALLOWED_BUCKETS allows/);
    refused(() => open.resolve('wasb://container/a.tif'), /scheme 'wasb'/);
    refused(() => open.resolve('http://user:pw@example.com/a.tif'), /credentials/);
    refused(() => open.resolve(''), /empty/);
  });

  it('allows object URLs only in the buckets and prefixes TESSERA_ALLOWED_BUCKETS names', () => {
    const buckets = new UrlPolicy({
      allowedLocalRoots: [],
      allowedHosts: [],
      deniedHosts: [],
      allowedBuckets: ['s3://mine', 's3://shared/public/', 'gs://open'],
    });
    assert.deepEqual(buckets.resolve('s3://mine/a b.tif'), { kind: 'http', url: 's3://mine/a%20b.tif' });
    assert.deepEqual(buckets.resolve('s3://shared/public/x/c.tif'), { kind: 'http', url: 's3://shared/public/x/c.tif' });
    assert.deepEqual(buckets.resolve('gs://open/d.tif'), { kind: 'http', url: 'gs://open/d.tif' });
    refused(() => buckets.resolve('s3://shared/private/c.tif'), /TESSERA_ALLOWED_BUCKETS/);
    refused(() => buckets.resolve('s3://shared/public/../private/c.tif'), /TESSERA_ALLOWED_BUCKETS/);
    refused(() => buckets.resolve('s3://shared/public/%2F..%2Fprivate/c.tif'), /no \. or \.\. segments/);
    refused(() => buckets.resolve('s3://Mine/a.tif'), /not a bucket name/);
    refused(() => buckets.resolve('s3://other/c.tif'), /TESSERA_ALLOWED_BUCKETS/);
    refused(() => buckets.resolve('gs://mine/a.tif'), /TESSERA_ALLOWED_BUCKETS/);
    refused(() => buckets.resolve('s3://mine/'), /names no object/);
    refused(() => buckets.resolve('s3://mine/a.tif?versionId=1'), /no query/);
    refused(() => buckets.resolve('s3://user@mine/a.tif'), /bucket\/key/);
    refused(() => buckets.resolve('s3://mine:9000/a.tif'), /bucket\/key/);
  });

  it("reads https URLs of the server's own Azure account as az:// only in allowed containers", () => {
    const azure = new UrlPolicy({
      allowedLocalRoots: [],
      allowedHosts: [],
      deniedHosts: [],
      allowedBuckets: ['az://cogs', 'az://shared/public/'],
      azureAccount: 'myaccount',
      azureBlobEndpoint: 'http://127.0.0.1:10000/myaccount',
    });
    const http = (url: string) => ({ kind: 'http', url });
    assert.deepEqual(azure.resolve('https://myaccount.blob.core.windows.net/cogs/a%20b.tif'), http('az://cogs/a%20b.tif'));
    assert.deepEqual(azure.resolve('https://MyAccount.blob.core.windows.net/shared/public/x.tif'), http('az://shared/public/x.tif'));
    // The configured endpoint (an emulator) serves the same account.
    assert.deepEqual(azure.resolve('http://127.0.0.1:10000/myaccount/cogs/c.tif'), http('az://cogs/c.tif'));
    // Outside the allow-list, another account, another scheme or a URL with its own SAS: plain https, no credentials lent.
    for (const url of [
      'https://myaccount.blob.core.windows.net/shared/private/x.tif',
      'https://myaccount.blob.core.windows.net/other/a.tif',
      'https://otheraccount.blob.core.windows.net/cogs/a.tif',
      'http://myaccount.blob.core.windows.net/cogs/a.tif',
      'https://myaccount.blob.core.windows.net/cogs/a.tif?sv=2024-01-01&sig=abc',
      'https://myaccount.blob.core.windows.net/cogs/',
    ]) {
      assert.deepEqual(azure.resolve(url), http(new URL(url).href), url);
    }
    // Loopback is still refused for what is plain http.
    refused(() => azure.resolve('http://127.0.0.1:10000/myaccount/other/c.tif'), /not allowed/);
    // No az:// entry in the allow-list: no URL is the account's.
    const s3Only = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [], allowedBuckets: ['s3://cogs'], azureAccount: 'myaccount' });
    assert.deepEqual(s3Only.resolve('https://myaccount.blob.core.windows.net/cogs/a.tif'), http('https://myaccount.blob.core.windows.net/cogs/a.tif'));
  });

  it('allows local files only inside configured roots', () => {
    const local = new UrlPolicy({ allowedLocalRoots: ['/data'], allowedHosts: [], deniedHosts: [] });
    assert.deepEqual(local.resolve('/data/a.tif'), { kind: 'file', path: '/data/a.tif' });
    assert.deepEqual(local.resolve('file:///data/sub/b.tif'), { kind: 'file', path: '/data/sub/b.tif' });
    refused(() => local.resolve('/data/../etc/passwd'), /outside the allowed/);
    refused(() => local.resolve('/database/a.tif'), /outside the allowed/);
  });

  it('restricts hosts with allow and deny lists', () => {
    const p = new UrlPolicy({
      allowedLocalRoots: [],
      allowedHosts: ['*.example.com', '127.0.0.1'],
      deniedHosts: ['bad.example.com'],
      allowedNetworks: ['127.0.0.1/32'],
    });
    assert.ok(p.resolve('https://data.example.com/a.tif'));
    assert.ok(p.resolve('http://127.0.0.1:9000/a.tif'));
    refused(() => p.resolve('https://bad.example.com/a.tif'), /denied/);
    refused(() => p.resolve('https://example.org/a.tif'), /not in the allowed hosts/);
  });

  it('refuses IP literals of non-public networks in any notation, unless TESSERA_ALLOWED_NETWORKS opens them', () => {
    for (const url of [
      'http://127.0.0.1/a',
      'http://2130706433/a',
      'http://0x7f.1/a',
      'http://127.1/a',
      'http://0177.0.0.1/a',
      'http://[::ffff:127.0.0.1]/a',
      'http://[::1]/a',
    ]) {
      refused(() => open.resolve(url), /loopback.*TESSERA_ALLOWED_NETWORKS/);
    }
    refused(() => open.resolve('http://169.254.169.254/latest/meta-data/'), /linkLocal/);
    refused(() => open.resolve('https://10.0.0.1/a.tif'), /private/);
    refused(() => open.resolve('http://[fd12::1]/a.tif'), /uniqueLocal/);
    const lan = new UrlPolicy({ allowedLocalRoots: [], allowedHosts: [], deniedHosts: [], allowedNetworks: ['10.0.0.0/8'] });
    assert.ok(lan.resolve('https://10.0.0.1/a.tif'));
    refused(() => lan.resolve('http://127.0.0.1/a'), /loopback/);
    assert.ok(open.resolve('https://93.184.216.34/a.tif'));
  });
});
