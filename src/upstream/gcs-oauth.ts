/**
 * Google Cloud Storage with OAuth 2.0 from a service account, as GDAL's /vsigs/ reads
 * GOOGLE_APPLICATION_CREDENTIALS: the service account's JSON key signs a JWT assertion, its token
 * endpoint exchanges it for a bearer token (read-only scope), and every gs:// read carries that token.
 * google-auth-library (Google's own) makes the assertion and keeps the token, fetching a new one
 * five minutes before it expires; `cachedCredentials` (object-stores.ts) keeps it for this process
 * until then too, so that the gateway's thread and the main thread share one token.
 *
 * The key file's `token_uri` is honoured, as Google's Python library honours it (this one always
 * posts to Google's): the file is the operator's, never a client's, and the token endpoint is reached
 * by this provider alone, outside the network policy that checks client URLs, as the AWS credential
 * chain reaches instance metadata.
 */
import { readFile } from 'node:fs/promises';
import type { JWT } from 'google-auth-library';
import { TesseraError } from '../errors.js';
import type { Credentials } from './object-stores.js';

/** Where google-auth-library posts a service account's assertion. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Reads only: the token cannot write or delete, whatever roles the service account has. */
const READ_ONLY_SCOPE = 'https://www.googleapis.com/auth/devstorage.read_only';

interface ServiceAccountKey {
  type?: string;
  client_email?: string;
  private_key?: string;
  private_key_id?: string;
  token_uri?: string;
}

async function readKey(file: string): Promise<ServiceAccountKey> {
  let key: ServiceAccountKey;
  try {
    key = JSON.parse(await readFile(file, 'utf8')) as ServiceAccountKey;
  } catch (err) {
    throw new TesseraError('UpstreamError', `GOOGLE_APPLICATION_CREDENTIALS: '${file}' is not a readable JSON key file`, { cause: err });
  }
  if (key.type !== 'service_account' || !key.client_email || !key.private_key) {
    throw new TesseraError(
      'UpstreamError',
      `GOOGLE_APPLICATION_CREDENTIALS: '${file}' is not a service account's key (type "service_account" with client_email and private_key)`,
    );
  }
  return key;
}

async function jwtClient(key: ServiceAccountKey): Promise<JWT> {
  // Loaded on first use: a server that reads no gs:// URL with OAuth never loads it.
  const { JWT } = await import('google-auth-library');
  const jwt = new JWT({ email: key.client_email, key: key.private_key, keyId: key.private_key_id, scopes: [READ_ONLY_SCOPE] });
  const tokenUri = key.token_uri;
  if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
    const target = new URL(tokenUri);
    jwt.transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = target;
        return options;
      },
    });
  }
  return jwt;
}

/** The token endpoint's refusal (`invalid_grant`: a key it does not know, or a disabled account), from google-auth-library's error. */
function refusal(err: unknown): string | undefined {
  const response = (err as { response?: { status?: number; data?: { error?: unknown; error_description?: unknown } } }).response;
  const status = response?.status;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  const code = typeof response?.data?.error === 'string' ? response.data.error : '';
  const description = typeof response?.data?.error_description === 'string' ? `: ${response.data.error_description}` : '';
  return `${status}${code ? ` ${code}` : ''}${description}`.slice(0, 300);
}

/** Bearer tokens for the service account whose key is in `file`, each with its expiry (for `cachedCredentials`). */
export function gcsServiceAccount(file: string): () => Promise<Credentials> {
  let jwt: Promise<JWT> | undefined;
  return async () => {
    jwt ??= readKey(file).then(jwtClient);
    let auth: JWT;
    try {
      auth = await jwt;
    } catch (err) {
      // A key file fixed later is read again.
      jwt = undefined;
      throw err;
    }
    try {
      const { token } = await auth.getAccessToken();
      if (!token) throw new Error('the token endpoint answered no access_token');
      const expiry = auth.credentials.expiry_date;
      return { accessKeyId: '', secretAccessKey: '', bearer: token, expiration: typeof expiry === 'number' ? new Date(expiry) : undefined };
    } catch (err) {
      const refused = refusal(err);
      if (refused) {
        throw new TesseraError('UpstreamForbidden', `the service account of GOOGLE_APPLICATION_CREDENTIALS was refused by its token endpoint (${refused})`, {
          cause: err,
        });
      }
      throw new TesseraError(
        'UpstreamError',
        'no OAuth token for the service account of GOOGLE_APPLICATION_CREDENTIALS: its token endpoint could not be reached',
        {
          cause: err,
        },
      );
    }
  };
}
