/**
 * What the attacker-controlled `url` parameter (and every href inside a fetched document) may name.
 * http(s) is allowed; local files only inside configured roots; GDAL virtual paths (/vsi…),
 * other schemes, hosts outside the allow list and IP literals of refused networks (network-policy.ts;
 * `127.1`, `2130706433` and `[::ffff:127.0.0.1]` are normalised by the URL parser first) are refused
 * with a 400. Names are checked where they are resolved, on the address connected to.
 *
 * One exception, for the process itself: while it warms up, before it listens, the URL of the
 * warm-up's own file (served on loopback by the upstream gateway's thread, under a random name) is
 * admitted as it is (`admitWhileWarming`), and no other.
 */
import path from 'node:path';
import { badRequest } from '../errors.js';
import { NetworkPolicy, NetworkRefused } from './network-policy.js';
import { azureAccountBases, azureAccountObject, checkObjectUrl, isObjectUrl } from './object-stores.js';

export interface UrlPolicyOptions {
  allowedLocalRoots: readonly string[];
  allowedHosts: readonly string[];
  deniedHosts: readonly string[];
  /** CIDRs opened to upstream connections besides public unicast addresses (default: none). */
  allowedNetworks?: readonly string[];
  /** Buckets (and prefixes) object URLs may name (`s3://bucket/prefix/`, object-stores.ts); none: no object URL at all. */
  allowedBuckets?: readonly string[];
  /**
   * The Azure account whose credentials the server holds ('': the connection string's) and its Blob
   * endpoint ('': the connection string's, else https://ACCOUNT.blob.core.windows.net): https URLs of
   * that account's allowed containers are read as the az:// URLs they stand for (object-stores.ts).
   */
  azureAccount?: string;
  azureBlobEndpoint?: string;
}

/**
 * Where a raster or document is. `http` is anything read through the upstream client: an http(s)
 * URL, or an object URL (`s3://…`, `gs://…`, `az://…`) that the client turns into a signed request to its store.
 */
export type Location = { kind: 'http'; url: string } | { kind: 'file'; path: string };

function hostMatches(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  const p = pattern.toLowerCase();
  if (p.startsWith('*.')) return h.endsWith(p.slice(1)) || h === p.slice(2);
  return h === p;
}

export class UrlPolicy {
  private readonly roots: string[];
  readonly network: NetworkPolicy;
  /** Where the Azure account's own URLs start (azureAccountBases); none without an account or an allowed container. */
  private readonly azureBases: URL[];
  /** The warm-up's own URLs, admitted until it ends (admitWhileWarming). */
  private readonly warming = new Set<string>();

  /** `network` replaces the policy made from `opts.allowedNetworks` (tests give one with their own resolver). */
  constructor(
    private readonly opts: UrlPolicyOptions,
    network?: NetworkPolicy,
  ) {
    this.roots = opts.allowedLocalRoots.map((r) => path.resolve(r));
    this.network = network ?? new NetworkPolicy(opts.allowedNetworks ?? []);
    const azureAllowed = (opts.allowedBuckets ?? []).some((entry) => /^az:\/\//i.test(entry.trim()));
    this.azureBases = azureAllowed ? azureAccountBases({ account: opts.azureAccount ?? '', endpoint: opts.azureBlobEndpoint ?? '', noSignRequest: false }) : [];
  }

  get allowsLocalFiles(): boolean {
    return this.roots.length > 0;
  }

  /**
   * Admits `url` exactly (the warm-up's own file, warm-up.ts) until the function returned is called,
   * which the warm-up does before the server listens.
   */
  admitWhileWarming(url: string): () => void {
    this.warming.add(url);
    return () => void this.warming.delete(url);
  }

  /** Checks `input` and says how to reach it; throws a BadRequest TesseraError when refused. */
  resolve(input: string, what = 'url'): Location {
    const text = input.trim();
    if (text === '') throw badRequest(`${what} is empty`);
    if (this.warming.size > 0 && this.warming.has(text)) return { kind: 'http', url: text };
    if (/^\/?vsi[a-z0-9_]+([/?]|$)/i.test(text)) {
      throw badRequest(`${what} '${input}' is not allowed: GDAL virtual file systems are refused`);
    }
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(text)?.[1]?.toLowerCase();
    if (scheme === 'http' || scheme === 'https') return { kind: 'http', url: this.azureObject(text) ?? this.checkHttp(text, what) };
    if (isObjectUrl(text)) return { kind: 'http', url: checkObjectUrl(text, this.opts.allowedBuckets ?? [], what) };
    if (scheme === 'file') return { kind: 'file', path: this.checkFile(decodeURIComponent(new URL(text).pathname), input, what) };
    if (scheme !== undefined && !/^[a-z]:[\\/]/i.test(text)) {
      throw badRequest(`${what} '${input}' is not allowed: scheme '${scheme}' is not supported (use http, https, s3, gs or az)`);
    }
    return { kind: 'file', path: this.checkFile(text, input, what) };
  }

  /** The az:// URL an https URL of the server's own Azure account stands for, when its container is allowed. */
  private azureObject(text: string): string | undefined {
    if (this.azureBases.length === 0) return undefined;
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return undefined;
    }
    return azureAccountObject(url, this.azureBases, this.opts.allowedBuckets ?? []);
  }

  private checkHttp(text: string, what: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw badRequest(`${what} '${text}' is not a valid URL`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (this.opts.deniedHosts.some((p) => hostMatches(host, p))) {
      throw badRequest(`${what} '${text}' is not allowed: host '${host}' is denied`);
    }
    if (this.opts.allowedHosts.length > 0 && !this.opts.allowedHosts.some((p) => hostMatches(host, p))) {
      throw badRequest(`${what} '${text}' is not allowed: host '${host}' is not in the allowed hosts`);
    }
    if (url.username || url.password) {
      throw badRequest(`${what} '${text}' is not allowed: credentials in URLs are refused`);
    }
    try {
      this.network.checkLiteral(host);
    } catch (err) {
      if (err instanceof NetworkRefused) throw badRequest(`${what} '${text}' is not allowed: ${err.message}`);
      throw err;
    }
    return url.href;
  }

  private checkFile(p: string, input: string, what: string): string {
    if (!this.allowsLocalFiles) {
      throw badRequest(`${what} '${input}' is not allowed: local files are disabled (use an http(s) URL)`);
    }
    const resolved = path.resolve(p);
    const inside = this.roots.some((root) => resolved === root || resolved.startsWith(root + path.sep));
    if (!inside) throw badRequest(`${what} '${input}' is not allowed: outside the allowed local folders`);
    return resolved;
  }
}

/** GDAL path for a location: remote rasters go through /vsicurl/; object URLs only through the gateway (gateway.ts), which signs. */
export function gdalPath(loc: Location): string {
  if (loc.kind === 'file') return loc.path;
  if (isObjectUrl(loc.url)) throw badRequest(`'${loc.url}' is read only through tessera's upstream gateway: TESSERA_UPSTREAM_GATEWAY is off`);
  return `/vsicurl/${loc.url}`;
}
