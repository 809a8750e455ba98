// A real OAuth 2.1 / OpenID Connect authorization server for the auth tests: panva's
// oidc-provider (a certified implementation), configured for MCP: resource indicators
// (RFC 8707) issuing JWT access tokens whose audience is the requested resource, client
// credentials, PKCE-only authorization code with automatic consent (the test plays the
// user), refresh tokens, introspection, dynamic client registration.
//
// Usage: node oidc_server.mjs CONFIG.json   (prints "ISSUER <url>" once listening)
// CONFIG: {"clients": [...oidc-provider client metadata...], "subject": "alice",
//          "scopes": ["mcp:tools", ...], "path": ""}
// A line "rotate" on stdin rotates the signing keys: new ones sign from then on, the old
// ones stay published beside them (as an issuer rotating keys does); it answers
// "ROTATED <kid>" (the new key id of the token algorithm). End of stdin ends the server.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import * as jose from 'jose';
import Provider from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const scopes = config.scopes ?? ['mcp:tools', 'mcp:admin'];

let generation = 0;
async function newKeys() {
  generation += 1;
  const made = [];
  for (const alg of ['ES256', 'RS256']) {
    const { privateKey } = await jose.generateKeyPair(alg, { extractable: true });
    const jwk = await jose.exportJWK(privateKey);
    made.push({ ...jwk, alg, use: 'sig', kid: `${alg.toLowerCase()}-${Date.now()}-${generation}` });
  }
  return made;
}

const http = createServer();
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${http.address().port}${config.path ?? ''}`;

// The keys tokens are signed with (their kid per algorithm); all of `keys` are published.
let keys = await newKeys();
const signing = {};
const useForSigning = (made) => { for (const k of made) signing[k.alg] = k.kid; };
useForSigning(keys);

function makeProvider() {
  const provider = new Provider(issuer, {
    clients: config.clients ?? [],
    jwks: { keys: keys.map((k) => ({ ...k })) },
    scopes: ['openid', 'offline_access', ...scopes],
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'],
    pkce: { required: () => true },
    // Refresh tokens for every client registered for the grant: OpenID Connect's rule
    // (offline_access only with prompt=consent) is not what MCP clients follow.
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    findAccount: async (ctx, sub) => ({ accountId: sub, claims: async () => ({ sub }) }),
    ttl: { AccessToken: config.accessTokenTTL ?? 600, ClientCredentials: config.accessTokenTTL ?? 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource) => ({
          scope: scopes.join(' '),
          audience: resource,
          accessTokenTTL: config.accessTokenTTL ?? 600,
          // Opaque tokens (introspected) for the resources the config lists; JWTs otherwise.
          accessTokenFormat: (config.opaqueResources ?? []).includes(resource) ? 'opaque' : 'jwt',
          jwt: { sign: { alg: config.tokenAlg ?? 'ES256', kid: signing[config.tokenAlg ?? 'ES256'] } },
        }),
      },
    },
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId
        || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
  });
  provider.proxy = false;

  // The user: logs in as the configured subject and consents to everything asked.
  provider.use(async (ctx, next) => {
    const m = ctx.path.match(/^\/interaction\/([^/]+)$/);
    if (!m) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { prompt, params } = details;
    if (prompt.name === 'login') {
      const result = { login: { accountId: config.subject ?? 'alice' } };
      return provider.interactionFinished(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    // Consent to whatever the prompt says is missing: scopes at the provider level, and the
    // scopes of each resource indicator.
    const missing = prompt.details ?? {};
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    const grantId = await grant.save();
    return provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });

  return provider;
}

let handler = makeProvider().callback();
http.on('request', (req, res) => handler(req, res));
console.log(`ISSUER ${issuer}`);
const commands = createInterface({ input: process.stdin });
commands.on('line', async (line) => {
  if (line.trim() !== 'rotate') return;
  const made = await newKeys();
  keys = [...made, ...keys];
  useForSigning(made);
  handler = makeProvider().callback();
  console.log(`ROTATED ${signing[config.tokenAlg ?? 'ES256']}`);
});
commands.on('close', () => process.exit(0));
