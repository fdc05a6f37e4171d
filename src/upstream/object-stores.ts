/**
 * Object stores: `s3://bucket/key` (AWS S3 and S3-compatible stores such as MinIO, Ceph or R2),
 * `gs://bucket/key` (Google Cloud Storage through its XML API, with HMAC keys or a service account's
 * OAuth tokens: gcs-oauth.ts) and
 * `az://container/blob` (Azure Blob Storage with a SAS token or a shared key), read as GDAL's
 * /vsis3/, /vsigs/ and /vsiaz/ read them, with the settings GDAL users know (AWS_S3_ENDPOINT,
 * AWS_HTTPS, AWS_VIRTUAL_HOSTING, AWS_REGION, AWS_REQUEST_PAYER, AWS_NO_SIGN_REQUEST,
 * AZURE_STORAGE_ACCOUNT, AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_ACCESS_KEY, AZURE_STORAGE_CONNECTION_STRING …).
 *
 * An object URL stays what the client wrote everywhere above this module (locations, cache keys,
 * gateway paths, messages); only the upstream client (client.ts) turns it into a request: the
 * store's HTTP address and the headers of an AWS Signature V4, made by @smithy/signature-v4 (the
 * AWS SDK's own signer). Credentials come from the AWS SDK's standard chain (environment, profile
 * files, web identity, container and instance metadata: @aws-sdk/credential-providers), kept until
 * five minutes before they expire. The instance metadata address is reached only by that provider,
 * never by a client's URL, which the network policy still refuses.
 *
 * Safe by default: the server's credentials are lent to no bucket a request names unless
 * TESSERA_ALLOWED_BUCKETS allows it (`checkObjectUrl`); with none listed, every object URL is refused.
 */
import type { IncomingMessage } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { TesseraError, badRequest } from '../errors.js';
import { gcsServiceAccount } from './gcs-oauth.js';

const ALLOWED_BUCKETS_SETTING = 'TESSERA_ALLOWED_BUCKETS';

/** The URL schemes of object stores. */
export type ObjectScheme = 's3' | 'gs' | 'az';

/** How to reach the object stores (settings.ts declares each; plain data, so that it crosses to the gateway's thread). */
export interface ObjectStoreOptions {
  /** `s3://bucket`, `s3://bucket/prefix/`, `gs://bucket` …: what object URLs may name. */
  allowedBuckets: readonly string[];
  s3: {
    region: string;
    /** host[:port] or a URL of an S3-compatible store; '' for AWS. */
    endpoint: string;
    https: boolean;
    virtualHosting: boolean;
    /** `requester`: the reader pays (x-amz-request-payer); '' otherwise. */
    requestPayer: string;
    noSignRequest: boolean;
  };
  gs: {
    /** The XML API's address (`https://storage.googleapis.com`). */
    endpoint: string;
    noSignRequest: boolean;
  };
  az: {
    /** The storage account ('': the connection string's AccountName). */
    account: string;
    /** The Blob service's address ('': the connection string's BlobEndpoint, else https://ACCOUNT.blob.core.windows.net). */
    endpoint: string;
    noSignRequest: boolean;
  };
}

/** An object URL taken apart. */
export interface ObjectRef {
  scheme: ObjectScheme;
  bucket: string;
  /** The key as stored (decoded). */
  key: string;
}

/**
 * Credentials as the signer takes them; for Azure, `sas` is the SAS query that authorises a read, and
 * for GCS with OAuth `bearer` is the access token sent as it is (the keys are then empty).
 */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
  expiration?: Date | undefined;
  sas?: string | undefined;
  bearer?: string | undefined;
}

/**
 * No credentials of a store's were found where the server looks for them: the operator's to set
 * (502 with what to set), and no fault of the store's (the gateway does not count it as one).
 */
export class MissingCredentials extends TesseraError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('UpstreamError', message, options);
  }
}

/** Where credentials come from: the provider chain in the thread that holds them, a question to that thread elsewhere. */
export type CredentialSource = () => Promise<Credentials>;

/** An upstream request for an object: the store's HTTP URL and the headers that sign it. */
export interface PreparedRequest {
  url: string;
  headers: Record<string, string>;
}

export function isObjectUrl(text: string): boolean {
  return /^(s3|gs|az):\/\//i.test(text.trim());
}

const BUCKET_NAME = /^[a-z0-9][a-z0-9._-]{1,253}[a-z0-9]$/;

/** Takes an object URL apart; throws a 400 for one that names no bucket or key. */
function parseObjectUrl(text: string, what = 'url'): ObjectRef {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw badRequest(`${what} '${text}' is not a valid URL`);
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase() as ObjectScheme;
  const bucket = url.hostname;
  if (!BUCKET_NAME.test(bucket)) throw badRequest(`${what} '${text}' is not allowed: '${bucket}' is not a bucket name`);
  if (url.username || url.password || url.port) throw badRequest(`${what} '${text}' is not allowed: write ${scheme}://bucket/key`);
  if (url.search || url.hash) throw badRequest(`${what} '${text}' is not allowed: an object URL has no query or fragment`);
  let key: string;
  try {
    key = decodeURIComponent(url.pathname.slice(1));
  } catch {
    throw badRequest(`${what} '${text}' is not a valid URL`);
  }
  if (key === '' || key.endsWith('/')) throw badRequest(`${what} '${text}' names no object (write ${scheme}://bucket/key)`);
  // The URL parser removes dot segments, but not encoded slashes around them: a store or proxy that
  // normalised `public/%2F..%2Fprivate` would read outside the prefix the allow-list checked.
  if (key.split('/').some((part) => part === '.' || part === '..')) throw badRequest(`${what} '${text}' is not allowed: a key has no . or .. segments`);
  return { scheme, bucket, key };
}

/** An allow-list entry: a bucket, or a bucket and a key prefix. */
function parseAllowed(entry: string): ObjectRef {
  const m = /^(s3|gs|az):\/\/([^/]+)(?:\/(.*))?$/i.exec(entry.trim());
  if (!m) throw new Error(`${ALLOWED_BUCKETS_SETTING}: '${entry}' is not s3://bucket[/prefix], gs://bucket[/prefix] or az://container[/prefix]`);
  return { scheme: m[1]!.toLowerCase() as ObjectScheme, bucket: m[2]!, key: m[3] ?? '' };
}

/** Throws on an allow-list entry that is not `scheme://bucket[/prefix]` (at start, not per request). */
function checkAllowedBuckets(entries: readonly string[]): void {
  for (const entry of entries) parseAllowed(entry);
}

/**
 * The object URL `text` in its canonical form, when the allow-list names its bucket (and prefix);
 * otherwise a 400 that names the setting.
 */
export function checkObjectUrl(text: string, allowedBuckets: readonly string[], what = 'url'): string {
  const ref = parseObjectUrl(text, what);
  const allowed = allowedBuckets.map(parseAllowed).some((a) => a.scheme === ref.scheme && a.bucket === ref.bucket && ref.key.startsWith(a.key));
  if (!allowed) {
    throw badRequest(`${what} '${text}' is not allowed: ${ref.scheme}://${ref.bucket}/${ref.key} is not in the buckets ${ALLOWED_BUCKETS_SETTING} allows`);
  }
  return objectUrl(ref);
}

/** The canonical URL of an object. */
function objectUrl(ref: ObjectRef): string {
  return `${ref.scheme}://${ref.bucket}/${encodeKey(ref.key)}`;
}

/** A key as a URL path: each segment percent-encoded as S3's canonical request wants it (RFC 3986 unreserved characters kept). */
function encodeKey(key: string): string {
  return key
    .split('/')
    .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
    .join('/');
}

/** Credentials kept until `refreshBeforeMs` before they expire; a failed fetch is not kept. Counts its fetches. */
export function cachedCredentials(fetch: () => Promise<Credentials>, refreshBeforeMs = 5 * 60_000): CredentialSource & { fetches: () => number } {
  let held: Promise<Credentials> | undefined;
  let expires = Number.POSITIVE_INFINITY;
  let fetches = 0;
  const source = (): Promise<Credentials> => {
    if (held && Date.now() < expires - refreshBeforeMs) return held;
    fetches++;
    expires = Number.POSITIVE_INFINITY;
    const pending = fetch().then(
      (creds) => {
        expires = creds.expiration ? creds.expiration.getTime() : Number.POSITIVE_INFINITY;
        return creds;
      },
      (err: unknown) => {
        if (held === pending) held = undefined;
        throw err;
      },
    );
    held = pending;
    return pending;
  };
  return Object.assign(source, { fetches: () => fetches });
}

/**
 * The AWS SDK's standard chain (its own order: environment, SSO, profile files, credential
 * process, web identity, container, instance metadata), each answer kept until near its expiry.
 */
export function awsCredentialChain(): CredentialSource {
  let chain: (() => Promise<Credentials>) | undefined;
  return cachedCredentials(async () => {
    try {
      // Loaded on first use: a server that reads no s3:// URL never loads the AWS SDK.
      chain ??= (await import('@aws-sdk/credential-providers')).fromNodeProviderChain();
      return await chain();
    } catch (err) {
      throw new MissingCredentials(
        'no AWS credentials were found (environment, AWS_PROFILE, web identity, container or instance metadata); ' +
          'set them, or AWS_NO_SIGN_REQUEST=YES to read public buckets unsigned',
        { cause: err },
      );
    }
  });
}

/**
 * GCS's credentials in GDAL's order: HMAC keys (GS_ACCESS_KEY_ID, GS_SECRET_ACCESS_KEY) that sign
 * as S3's do, else OAuth bearer tokens for the service account of GOOGLE_APPLICATION_CREDENTIALS
 * (gcs-oauth.ts), kept until five minutes before they expire.
 */
export function gcsCredentials(env: NodeJS.ProcessEnv = process.env): CredentialSource {
  let oauth: CredentialSource | undefined;
  let oauthFile: string | undefined;
  return async () => {
    const accessKeyId = env['GS_ACCESS_KEY_ID'];
    const secretAccessKey = env['GS_SECRET_ACCESS_KEY'];
    if (accessKeyId && secretAccessKey) return { accessKeyId, secretAccessKey };
    const file = env['GOOGLE_APPLICATION_CREDENTIALS'];
    if (file) {
      if (!oauth || oauthFile !== file) [oauth, oauthFile] = [cachedCredentials(gcsServiceAccount(file)), file];
      return oauth();
    }
    throw new MissingCredentials(
      'no GCS credentials were found: set GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY (HMAC keys), or GOOGLE_APPLICATION_CREDENTIALS (a service account), or GS_NO_SIGN_REQUEST=YES',
    );
  };
}

/** An Azure connection string's fields (`AccountName=…;AccountKey=…;BlobEndpoint=…`). */
function connectionString(env: NodeJS.ProcessEnv): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of (env['AZURE_STORAGE_CONNECTION_STRING'] ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) fields[part.slice(0, at).trim()] = part.slice(at + 1).trim();
  }
  return fields;
}

/** The Azure account and Blob endpoint: the settings, else the connection string's (as GDAL reads them). */
function azureTarget(opts: ObjectStoreOptions['az'], env: NodeJS.ProcessEnv): { account: string; endpoint: string } {
  const cs = connectionString(env);
  const account = opts.account || cs['AccountName'] || '';
  const suffix = cs['EndpointSuffix'] ?? 'core.windows.net';
  const endpoint = opts.endpoint || cs['BlobEndpoint'] || (account ? `${cs['DefaultEndpointsProtocol'] ?? 'https'}://${account}.blob.${suffix}` : '');
  return { account, endpoint };
}

/**
 * Where the Azure account whose credentials the server holds is addressed by http(s) URLs: its
 * public address `https://ACCOUNT.blob.SUFFIX` and, when set, the configured Blob endpoint (an
 * emulator, a private endpoint), which serves the same account. None without an account.
 */
export function azureAccountBases(opts: ObjectStoreOptions['az'], env: NodeJS.ProcessEnv = process.env): URL[] {
  const { account, endpoint } = azureTarget(opts, env);
  // Azure's account names: 3 to 24 lowercase letters and digits. Anything else names no host of its.
  if (!/^[a-z0-9]{3,24}$/i.test(account)) return [];
  const suffix = connectionString(env)['EndpointSuffix'] ?? 'core.windows.net';
  const bases: URL[] = [];
  // A suffix or endpoint that is not part of a URL serves no reads either (httpUrl fails on it with its own message).
  for (const base of [`https://${account.toLowerCase()}.blob.${suffix}`, endpoint]) {
    if (!base) continue;
    try {
      bases.push(new URL(base));
    } catch {}
  }
  return bases;
}

/**
 * The az:// URL that an http(s) URL of the account's own Blob service stands for
 * (`https://ACCOUNT.blob.core.windows.net/container/blob` → `az://container/blob`), when the
 * allow-list names its container (and prefix); otherwise undefined: the URL is read as any other
 * https URL, without the server's credentials. A URL that carries a query (its own SAS token,
 * Planetary Computer's signed hrefs) is also read as it is.
 */
export function azureAccountObject(url: URL, bases: readonly URL[], allowedBuckets: readonly string[]): string | undefined {
  if (url.search || url.hash || url.username || url.password) return undefined;
  for (const base of bases) {
    const prefix = `${base.pathname.replace(/\/$/, '')}/`;
    if (url.protocol !== base.protocol || url.host !== base.host || !url.pathname.startsWith(prefix)) continue;
    const az = `az://${url.pathname.slice(prefix.length)}`;
    try {
      return checkObjectUrl(az, allowedBuckets);
    } catch {
      // Not allowed (or not a container and blob): an ordinary https URL.
      return undefined;
    }
  }
  return undefined;
}

/** How long a SAS made from a shared key lasts; it is made again five minutes before. */
const SAS_LIFETIME_MS = 60 * 60_000;

/**
 * Azure's credentials as GDAL takes them: a SAS token (AZURE_STORAGE_SAS_TOKEN, or the connection
 * string's SharedAccessSignature) as it is; a shared key (AZURE_STORAGE_ACCESS_KEY, or the
 * connection string's AccountKey) makes a read-only account SAS for an hour, by the Azure SDK
 * (@azure/storage-blob, loaded only then): every read carries a SAS, none is signed one by one.
 */
export function azureSas(opts: ObjectStoreOptions['az'], env: NodeJS.ProcessEnv = process.env): CredentialSource {
  return cachedCredentials(async () => {
    const cs = connectionString(env);
    const { account } = azureTarget(opts, env);
    const token = env['AZURE_STORAGE_SAS_TOKEN'] || cs['SharedAccessSignature'];
    if (token) return { accessKeyId: '', secretAccessKey: '', sas: token.replace(/^\?/, '') };
    const key = env['AZURE_STORAGE_ACCESS_KEY'] || cs['AccountKey'];
    if (!key || !account) {
      throw new MissingCredentials(
        'no Azure credentials were found: set AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_SAS_TOKEN or AZURE_STORAGE_ACCESS_KEY, or AZURE_STORAGE_CONNECTION_STRING (AZURE_NO_SIGN_REQUEST=YES for public containers)',
      );
    }
    const blob = await import('@azure/storage-blob');
    const expiresOn = new Date(Date.now() + SAS_LIFETIME_MS);
    const sas = blob
      .generateAccountSASQueryParameters(
        {
          expiresOn,
          // Clocks differ a little; a SAS that starts now may be refused by a store a few seconds behind.
          startsOn: new Date(Date.now() - 5 * 60_000),
          permissions: blob.AccountSASPermissions.parse('r'),
          services: blob.AccountSASServices.parse('b').toString(),
          resourceTypes: blob.AccountSASResourceTypes.parse('o').toString(),
          protocol: blob.SASProtocol.HttpsAndHttp,
        },
        new blob.StorageSharedKeyCredential(account, key),
      )
      .toString();
    return { accessKeyId: '', secretAccessKey: '', sas, expiration: expiresOn };
  });
}

function endpointBase(endpoint: string, https: boolean): URL {
  return new URL(/^https?:\/\//i.test(endpoint) ? endpoint : `${https ? 'https' : 'http'}://${endpoint}`);
}

export class ObjectStores {
  private readonly signers: Partial<Record<ObjectScheme, SignatureV4>> = {};
  private readonly azure: { account: string; endpoint: string };

  constructor(
    readonly opts: ObjectStoreOptions,
    private readonly credentials: Record<ObjectScheme, CredentialSource>,
    env: NodeJS.ProcessEnv = process.env,
  ) {
    checkAllowedBuckets(opts.allowedBuckets);
    this.azure = azureTarget(opts.az, env);
  }

  /** The HTTP request (URL and headers, signed unless the store is read unsigned) that GETs the object at `url`. */
  async prepare(url: string): Promise<PreparedRequest> {
    const ref = parseObjectUrl(url);
    const target = this.httpUrl(ref);
    if (ref.scheme === 'az') {
      if (!this.opts.az.noSignRequest) target.search = (await this.credentials.az()).sas ?? '';
      return { url: target.href, headers: {} };
    }
    const headers: Record<string, string> = {};
    if (ref.scheme === 's3' && this.opts.s3.requestPayer) headers['x-amz-request-payer'] = this.opts.s3.requestPayer;
    const unsigned = ref.scheme === 's3' ? this.opts.s3.noSignRequest : this.opts.gs.noSignRequest;
    if (unsigned) return { url: target.href, headers };
    if (ref.scheme === 'gs') {
      // OAuth (a service account): the token authorises the read as it is; HMAC keys sign below.
      const bearer = (await this.credentials.gs()).bearer;
      if (bearer) return { url: target.href, headers: { ...headers, authorization: `Bearer ${bearer}` } };
    }
    const signed = await this.signer(ref.scheme).sign({
      method: 'GET',
      protocol: target.protocol,
      hostname: target.hostname,
      ...(target.port ? { port: Number(target.port) } : {}),
      path: target.pathname,
      query: {},
      // The payload of a GET is empty; S3 wants its hash named, and accepts "unsigned".
      headers: { ...headers, host: target.host, 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' },
    });
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(signed.headers)) if (name !== 'host') out[name] = String(value);
    return { url: target.href, headers: out };
  }

  /** Where the object is served: virtual-hosted or path-style (GDAL's rules), on AWS or the configured endpoint. */
  httpUrl(ref: ObjectRef): URL {
    const key = encodeKey(ref.key);
    if (ref.scheme === 'az') {
      if (!this.azure.endpoint) throw new TesseraError('UpstreamError', `'${objectUrl(ref)}': no Azure storage account is set (AZURE_STORAGE_ACCOUNT)`);
      const base = new URL(this.azure.endpoint);
      return new URL(`${base.origin}${base.pathname.replace(/\/$/, '')}/${ref.bucket}/${key}`);
    }
    if (ref.scheme === 'gs') {
      const base = endpointBase(this.opts.gs.endpoint, true);
      return new URL(`${base.origin}${base.pathname.replace(/\/$/, '')}/${ref.bucket}/${key}`);
    }
    const s3 = this.opts.s3;
    // A bucket with dots would not match the store's TLS certificate as a host name: GDAL goes path-style for it too.
    const virtual = s3.virtualHosting && !ref.bucket.includes('.');
    if (s3.endpoint) {
      const base = endpointBase(s3.endpoint, s3.https);
      const prefix = base.pathname.replace(/\/$/, '');
      return virtual ? new URL(`${base.protocol}//${ref.bucket}.${base.host}${prefix}/${key}`) : new URL(`${base.origin}${prefix}/${ref.bucket}/${key}`);
    }
    const host = `s3.${s3.region}.amazonaws.com`;
    return new URL(virtual ? `https://${ref.bucket}.${host}/${key}` : `https://${host}/${ref.bucket}/${key}`);
  }

  private signer(scheme: ObjectScheme): SignatureV4 {
    let signer = this.signers[scheme];
    if (!signer) {
      const credentials = this.credentials[scheme];
      signer = new SignatureV4({
        credentials: () => credentials(),
        // GCS's XML API takes AWS's signature with the region "auto".
        region: scheme === 'gs' ? 'auto' : this.opts.s3.region,
        service: 's3',
        sha256: Hash.bind(null, 'sha256'),
        // S3 signs the path as sent, not encoded twice.
        uriEscapePath: false,
        applyChecksum: false,
      });
      this.signers[scheme] = signer;
    }
    return signer;
  }
}

/**
 * S3's error codes that mean the credentials were refused, whatever status carried them: an expired
 * or malformed session token comes as a 400 (ExpiredToken, InvalidToken), not a 403.
 */
const REFUSED_CREDENTIALS = new Set([
  // S3's and GCS's
  'AccessDenied',
  'AllAccessDisabled',
  'ExpiredToken',
  'InvalidAccessKeyId',
  'InvalidToken',
  'SignatureDoesNotMatch',
  'TokenRefreshRequired',
  // Azure's
  'AuthenticationFailed',
  'AuthorizationFailure',
  'AuthorizationPermissionMismatch',
  'AuthorizationResourceTypeMismatch',
  'AuthorizationServiceMismatch',
  'InsufficientAccountPermissions',
  'NoAuthenticationInformation',
  'PublicAccessNotPermitted',
]);

/** The error code of a store's answer that is not a success (its XML body's <Code>), from its first 16 KiB; undefined when it has none. The body is consumed. */
export async function storeErrorCode(res: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= 16_384) break;
    }
  } catch {
    return undefined;
  } finally {
    res.destroy();
  }
  return /<Code>([A-Za-z0-9.]{1,64})<\/Code>/.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
}

/** What a store's failed answer means for the client (a 403 for refused credentials, a 404 for a missing key), or undefined: the caller's own mapping applies. */
export function storeError(status: number, code: string | undefined, label: string): TesseraError | undefined {
  const answered = `the store answered ${status}${code ? ` ${code}` : ''}`;
  if (status === 401 || status === 403 || (code !== undefined && REFUSED_CREDENTIALS.has(code))) {
    return new TesseraError('UpstreamForbidden', `${label}: access refused (${answered})`);
  }
  if (status === 404 || code === 'NoSuchKey' || code === 'NoSuchBucket' || code === 'BlobNotFound' || code === 'ContainerNotFound')
    return new TesseraError('UpstreamNotFound', `${label} not found (${answered})`);
  return undefined;
}
