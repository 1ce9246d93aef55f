//! OAuth for the MCP client (the 2025-11-25 authorization specification and its
//! extensions): when a server answers 401 or 403 with `WWW-Authenticate`, the client
//! finds the server's authorization server ([`discover`]), gets a client there
//! ([`register`]: pre-registered, a metadata document URL, or dynamic registration),
//! gets a token by the grant the operator chose ([`grant`]) and sends the request
//! again with it. Tokens are held in memory for the life of the process, never
//! written anywhere.
//!
//! [`Authorizer`] is what the HTTP client ([`super::http`]) asks for the headers of
//! each request and tells of each challenge. A request is authorized at most
//! [`MAX_AUTHORIZATIONS`] times; a challenge for scopes already asked for is not
//! asked again. A refusal the client makes for safety (metadata for another
//! resource, an issuer that differs) ends every later attempt of the process too.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::Value;
use url::Url;

mod args;
pub(crate) mod discover;
mod grant;
pub(crate) mod jose;
mod register;

pub use args::OAuthArgs;
use discover::{Asked, Resource, Server};
use jose::Es256;

/// The most authorizations one request may cause (the first, then step-ups).
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// How the authorization code grant reaches its person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Authorize {
    /// The authorization URL is printed on stderr; the browser's redirect comes back
    /// to a loopback port the client listens on.
    Browser,
    /// The client requests the authorization URL itself and takes the code from the
    /// redirect it answers with: for servers that authorize without a person (test
    /// and CI servers).
    Fetch,
}

/// The grant the client asks for a token by.
#[derive(Clone)]
pub enum Grant {
    /// Authorization code with PKCE (a person authorizes).
    AuthorizationCode(Authorize),
    /// Client credentials (the client is the resource owner): a secret, or a
    /// `private_key_jwt` assertion.
    ClientCredentials,
    /// A JWT the workload already holds, as an RFC 7523 assertion (workload
    /// identity federation).
    JwtBearer { assertion: String },
    /// Enterprise-managed authorization (SEP-990): the enterprise IdP's ID token
    /// exchanged there for an identity assertion grant (RFC 8693), then that
    /// assertion for an access token at the server's authorization server.
    Enterprise {
        idp_token_endpoint: String,
        idp_client_id: Option<String>,
        id_token: String,
    },
}

/// What the operator told the client about OAuth.
#[derive(Clone)]
pub struct Config {
    pub grant: Grant,
    /// The authorization server the operator's own credentials are for (a
    /// pre-registered client's, a workload's assertion): they go to no other.
    pub issuer: Option<String>,
    /// A pre-registered client id (and its secret or key).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The key of a `private_key_jwt` client (ES256).
    pub(crate) private_key: Option<Arc<Es256>>,
    /// A Client ID Metadata Document URL, the client id where the server takes one.
    pub client_metadata_url: Option<String>,
}

// Written by hand, so that no secret, assertion or ID token is ever printed.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grant = match &self.grant {
            Grant::AuthorizationCode(how) => format!("AuthorizationCode({how:?})"),
            Grant::ClientCredentials => "ClientCredentials".into(),
            Grant::JwtBearer { .. } => "JwtBearer".into(),
            Grant::Enterprise { .. } => "Enterprise".into(),
        };
        f.debug_struct("Config")
            .field("grant", &grant)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("private_key", &self.private_key.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// A token in use.
#[derive(Clone)]
struct Token {
    access: String,
    /// Sent as `Authorization: DPoP`, with a proof per request.
    dpop: bool,
    refresh: Option<String>,
    /// Which token this is, counted from 1: a challenge to an older one is answered
    /// by the newer one, not by authorizing again.
    generation: u64,
}

/// A client registered (or pre-registered) at one authorization server.
#[derive(Debug, Clone)]
pub(crate) struct Client {
    pub(crate) id: String,
    pub(crate) secret: Option<String>,
    /// `none`, `client_secret_basic`, `client_secret_post` or `private_key_jwt`.
    pub(crate) method: String,
}

/// What one authorization goes by, kept between challenges.
#[derive(Default)]
struct Flow {
    /// Clients by authorization server issuer: one server's client is never shown to
    /// another.
    clients: HashMap<String, Client>,
    /// The scopes asked for so far (a step-up asks for their union with the new).
    scopes: BTreeSet<String>,
    /// The issuer the current token came from.
    issuer: Option<String>,
    /// The loopback listener the browser's redirect comes back to, and its URI.
    redirect: Option<(Arc<tokio::net::TcpListener>, String)>,
    /// The authorization server's last DPoP nonce.
    as_nonce: Option<String>,
    /// The authorization server the operator's credentials first went to.
    credentials_issuer: Option<String>,
}

/// OAuth for one server URL: the token, and how to get another.
pub struct Authorizer {
    config: Config,
    server: Url,
    http: reqwest::Client,
    flow: tokio::sync::Mutex<Flow>,
    token: Mutex<Option<Token>>,
    /// The key DPoP proofs are signed with, made when a server first offers DPoP.
    dpop: std::sync::OnceLock<Es256>,
    /// The resource server's last DPoP nonce.
    rs_nonce: Mutex<Option<String>>,
    /// Why the client stopped for good (see the module's words).
    refused: Mutex<Option<String>>,
}

use super::traffic::lock;

/// Headers to add to a request.
pub(crate) type Headers = Vec<(HeaderName, HeaderValue)>;

/// A refusal for safety, which ends the process's later attempts too.
pub(crate) struct Refusal(pub(crate) String);

impl Authorizer {
    /// An authorizer for the server at `server`.
    ///
    /// # Errors
    ///
    /// When the HTTP client cannot be built.
    pub fn new(config: Config, server: &str) -> anyhow::Result<Arc<Authorizer>> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(30))
            .build()?;
        Ok(Arc::new(Authorizer {
            config,
            server: Url::parse(server)?,
            http,
            flow: tokio::sync::Mutex::default(),
            token: Mutex::default(),
            dpop: std::sync::OnceLock::new(),
            rs_nonce: Mutex::default(),
            refused: Mutex::default(),
        }))
    }

    /// The headers that authorize a request (`Authorization`, and `DPoP` with a fresh
    /// proof for a DPoP-bound token), and the token's generation (0: none yet).
    pub(crate) fn headers(&self, method: &str, url: &str) -> (Headers, u64) {
        let Some(token) = lock(&self.token).clone() else {
            return (Vec::new(), 0);
        };
        let mut headers = Vec::new();
        let scheme = if token.dpop { "DPoP" } else { "Bearer" };
        if let Ok(v) = HeaderValue::from_str(&format!("{scheme} {}", token.access)) {
            headers.push((reqwest::header::AUTHORIZATION, v));
        }
        if token.dpop
            && let Some(key) = self.dpop.get()
        {
            let nonce = lock(&self.rs_nonce).clone();
            let proof = key.dpop_proof(method, url, Some(&token.access), nonce.as_deref());
            if let Ok(v) = HeaderValue::from_str(&proof) {
                headers.push((HeaderName::from_static("dpop"), v));
            }
        }
        (headers, token.generation)
    }

    /// The server refused a request sent with token `generation` (401, or 403 when
    /// `forbidden`) and challenged it with `www_authenticate`. `Ok` means send it
    /// again; `Err` says why not. `authorizations` counts this request's.
    pub(crate) async fn challenged(
        &self,
        url: &str,
        www_authenticate: &str,
        forbidden: bool,
        generation: u64,
        authorizations: &mut u32,
    ) -> Result<(), String> {
        if let Some(why) = lock(&self.refused).clone() {
            return Err(why);
        }
        let asked = Asked::read(www_authenticate);
        if asked.error.as_deref() == Some("use_dpop_nonce")
            && lock(&self.token).as_ref().is_some_and(|t| t.dpop)
        {
            if *authorizations >= MAX_AUTHORIZATIONS {
                return Err("the server kept asking for a new DPoP nonce; stopped there".into());
            }
            *authorizations += 1;
            return self.learn_nonce(url).await;
        }
        let mut flow = self.flow.lock().await;
        let current = lock(&self.token).as_ref().map_or(0, |t| t.generation);
        if current != generation {
            // Another request got a newer token meanwhile (a step-up's too): the
            // request goes again with it first.
            return Ok(());
        }
        if *authorizations >= MAX_AUTHORIZATIONS {
            return Err(format!(
                "the server still refused after {MAX_AUTHORIZATIONS} authorizations; \
                 stopped there"
            ));
        }
        match self.authorize(&mut flow, &asked, forbidden).await {
            Ok(()) => {
                *authorizations += 1;
                Ok(())
            }
            Err(Failure::Refused(Refusal(why))) => {
                *lock(&self.refused) = Some(why.clone());
                Err(why)
            }
            Err(Failure::Failed(why)) => Err(why),
        }
    }

    /// The resource server's DPoP nonce (RFC 9449 §9). It comes in a `DPoP-Nonce`
    /// header, which the MCP library's HTTP client does not pass on from a 401; so a
    /// `ping`, which changes nothing on any server, is sent to the same URL with a
    /// fresh proof, and the header is read from its answer.
    async fn learn_nonce(&self, url: &str) -> Result<(), String> {
        let (headers, _) = self.headers("POST", url);
        let mut request = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .body(r#"{"jsonrpc":"2.0","id":"structs-console-dpop-nonce","method":"ping"}"#);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let answer = request
            .send()
            .await
            .map_err(|e| format!("cannot ask the server for its DPoP nonce: {e}"))?;
        let nonce = dpop_nonce(&answer).ok_or("the server asked for a DPoP nonce and gave none")?;
        *lock(&self.rs_nonce) = Some(nonce);
        Ok(())
    }

    /// One authorization: discovery, a client, the scopes, a token.
    async fn authorize(
        &self,
        flow: &mut Flow,
        asked: &Asked,
        forbidden: bool,
    ) -> Result<(), Failure> {
        let (resource, server) = self.discover(asked).await?;
        let scopes = self.scopes(flow, asked, resource.as_ref(), &server, forbidden)?;
        let why = if forbidden {
            let new: Vec<&str> = scopes
                .iter()
                .filter(|s| !flow.scopes.contains(*s))
                .map(String::as_str)
                .collect();
            format!("asks for more access (scope {})", new.join(" "))
        } else {
            "asks for authorization".into()
        };
        let same_server = flow.issuer.as_deref() == Some(server.issuer.as_str());
        let refresh = lock(&self.token)
            .as_ref()
            .and_then(|t| t.refresh.clone())
            .filter(|_| same_server && !forbidden);
        if !same_server {
            // A new authorization server: nothing of the old one's is used there.
            flow.issuer = None;
        }
        if server.dpop_algs.iter().any(|a| a == "ES256") || asked.dpop {
            self.dpop.get_or_init(Es256::generate);
        }
        let resource_id = resource
            .as_ref()
            .map_or_else(|| self.server.to_string(), |r| r.resource.clone());
        let refreshed = match refresh {
            Some(refresh) => self
                .refresh(flow, &server, &resource_id, &refresh)
                .await
                .ok(),
            None => None,
        };
        let got = match refreshed {
            Some(got) => got,
            None => match self.grant(flow, &server, &resource_id, &scopes, &why).await {
                Ok(got) => got,
                Err(Failure::Failed(why)) if server.guessed => {
                    return Err(Failure::Failed(format!(
                        "{why} (the server publishes no OAuth metadata; if it takes a \
                         fixed token, give it with --auth-token)"
                    )));
                }
                Err(e) => return Err(e),
            },
        };
        flow.issuer = Some(server.issuer.clone());
        // A step-up's scopes hold those asked before; a plain new token's, those
        // asked now.
        flow.scopes = scopes;
        let mut token = lock(&self.token);
        let generation = token.as_ref().map_or(0, |t| t.generation) + 1;
        *token = Some(Token {
            access: got.access,
            dpop: got.dpop,
            refresh: got.refresh,
            generation,
        });
        Ok(())
    }

    /// The scopes to ask for: those the challenge names, else those the resource
    /// metadata lists, else none; with those asked for before on a step-up; with
    /// `offline_access` where the server lists it and a person authorizes.
    fn scopes(
        &self,
        flow: &Flow,
        asked: &Asked,
        resource: Option<&Resource>,
        server: &Server,
        forbidden: bool,
    ) -> Result<BTreeSet<String>, Failure> {
        let named: BTreeSet<String> = match (&asked.scope, resource) {
            (Some(scope), _) => scope.split_whitespace().map(str::to_string).collect(),
            (None, Some(r)) => r.scopes_supported.iter().cloned().collect(),
            (None, None) => BTreeSet::new(),
        };
        let mut scopes = named.clone();
        if forbidden {
            if named.is_empty() {
                return Err(Failure::Failed(
                    "the server refused the token for its scope (403) and named no scope \
                     to ask for"
                        .into(),
                ));
            }
            if named.is_subset(&flow.scopes) {
                return Err(Failure::Failed(format!(
                    "the server wants scope {:?}, which was asked for and not granted",
                    named.into_iter().collect::<Vec<_>>().join(" ")
                )));
            }
            scopes.extend(flow.scopes.iter().cloned());
        }
        if matches!(self.config.grant, Grant::AuthorizationCode(_))
            && !scopes.is_empty()
            && server
                .scopes_supported
                .iter()
                .any(|s| s == "offline_access")
        {
            scopes.insert("offline_access".into());
        }
        Ok(scopes)
    }
}

/// Why an authorization did not give a token.
pub(crate) enum Failure {
    /// For safety: later attempts are refused too.
    Refused(Refusal),
    Failed(String),
}

impl From<String> for Failure {
    fn from(why: String) -> Failure {
        Failure::Failed(why)
    }
}

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Failure {
        Failure::Refused(r)
    }
}

/// A form body, `application/x-www-form-urlencoded`.
pub(crate) fn encode(form: &[(&str, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish()
}

/// A response's status and JSON body (`null` where it is not JSON).
pub(crate) async fn read(answer: reqwest::Response) -> (reqwest::StatusCode, Value) {
    let status = answer.status();
    let body = answer.json::<Value>().await.unwrap_or(Value::Null);
    (status, body)
}

/// The `DPoP-Nonce` an answer carries, if any (RFC 9449).
pub(crate) fn dpop_nonce(answer: &reqwest::Response) -> Option<String> {
    answer
        .headers()
        .get("dpop-nonce")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// An OAuth error answer in words: `error: error_description`, or the status.
pub(crate) fn said(body: &Value, status: reqwest::StatusCode) -> String {
    match (body["error"].as_str(), body["error_description"].as_str()) {
        (Some(e), Some(d)) => format!("{e}: {d}"),
        (Some(e), None) => e.to_string(),
        _ => format!("HTTP {status}"),
    }
}

/// A JSON answer that must be a success: its body, or `{what}: {error}`.
pub(crate) async fn success(answer: reqwest::Response, what: &str) -> Result<Value, Failure> {
    let (status, body) = read(answer).await;
    if status.is_success() {
        Ok(body)
    } else {
        Err(Failure::Failed(format!("{what}: {}", said(&body, status))))
    }
}

#[cfg(test)]
mod tests;
