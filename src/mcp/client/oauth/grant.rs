//! Getting a token: each grant's token request, the authorization
//! code's round trip through a browser (or a fetch), and the token endpoint's client
//! authentication and DPoP.

use std::collections::BTreeSet;

use reqwest::header::HeaderName;
use url::Url;

use super::discover::Server;
use super::jose;
use super::{
    Authorize, Authorizer, Client, Failure, Flow, Grant, Refusal, dpop_nonce, encode, read, said,
    success,
};

/// What a token endpoint gave.
pub(super) struct Got {
    pub(super) access: String,
    pub(super) dpop: bool,
    pub(super) refresh: Option<String>,
}

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

type Form = Vec<(&'static str, String)>;

/// RFC 6749 §2.3.1: each half of Basic credentials form-encoded first.
fn basic_credentials(id: &str, secret: &str) -> String {
    let enc = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                    (b as char).to_string()
                }
                b => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", enc(id), enc(secret)))
}

impl Authorizer {
    /// A token by the configured grant.
    pub(super) async fn grant(
        &self,
        flow: &mut Flow,
        server: &Server,
        resource: &str,
        scopes: &BTreeSet<String>,
        why: &str,
    ) -> Result<Got, Failure> {
        let scope = scopes.iter().cloned().collect::<Vec<_>>().join(" ");
        let (grant_type, assertion, client) = match &self.config.grant {
            Grant::AuthorizationCode(how) => {
                return self
                    .authorization_code(flow, server, resource, &scope, *how, why)
                    .await;
            }
            Grant::ClientCredentials => (
                "client_credentials",
                None,
                Some(self.preregistered(flow, server)?),
            ),
            Grant::JwtBearer { assertion } => {
                self.credentials_go_to(flow, server)?;
                let client = self.given_client(flow, server)?;
                (JWT_BEARER, Some(assertion.clone()), client)
            }
            Grant::Enterprise {
                idp_token_endpoint,
                idp_client_id,
                id_token,
            } => {
                let assertion = self
                    .exchange(
                        server,
                        resource,
                        &scope,
                        idp_token_endpoint,
                        idp_client_id.as_deref(),
                        id_token,
                    )
                    .await?;
                (
                    JWT_BEARER,
                    Some(assertion),
                    Some(self.preregistered(flow, server)?),
                )
            }
        };
        let mut form: Form = vec![("grant_type", grant_type.into())];
        form.extend(assertion.map(|a| ("assertion", a)));
        form.push(("resource", resource.to_string()));
        if !scope.is_empty() {
            form.push(("scope", scope));
        }
        self.token(flow, server, client.as_ref(), form).await
    }

    /// The pre-registered client where the operator gave a client id, else none.
    fn given_client(&self, flow: &mut Flow, server: &Server) -> Result<Option<Client>, Failure> {
        if self.config.client_id.is_some() {
            self.preregistered(flow, server).map(Some)
        } else {
            Ok(None)
        }
    }

    /// A new token from the refresh token, for the same resource.
    pub(super) async fn refresh(
        &self,
        flow: &mut Flow,
        server: &Server,
        resource: &str,
        refresh: &str,
    ) -> Result<Got, Failure> {
        let client = match flow.clients.get(&server.issuer) {
            Some(client) => Some(client.clone()),
            None => self.given_client(flow, server)?,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh.to_string()),
            ("resource", resource.to_string()),
        ];
        let mut got = self.token(flow, server, client.as_ref(), form).await?;
        got.refresh = got.refresh.or_else(|| Some(refresh.to_string()));
        Ok(got)
    }

    /// SEP-990's first step: the IdP's ID token exchanged at the IdP for an identity
    /// assertion grant (ID-JAG) for this authorization server and resource.
    async fn exchange(
        &self,
        server: &Server,
        resource: &str,
        scope: &str,
        idp_token_endpoint: &str,
        idp_client_id: Option<&str>,
        id_token: &str,
    ) -> Result<String, Failure> {
        let mut form: Form = vec![
            ("grant_type", TOKEN_EXCHANGE.into()),
            ("requested_token_type", ID_JAG.into()),
            ("subject_token", id_token.to_string()),
            ("subject_token_type", ID_TOKEN.into()),
            ("audience", server.issuer.clone()),
            ("resource", resource.to_string()),
        ];
        if !scope.is_empty() {
            form.push(("scope", scope.to_string()));
        }
        if let Some(id) = idp_client_id {
            form.push(("client_id", id.to_string()));
        }
        let answer = self
            .http
            .post(idp_token_endpoint)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(encode(&form))
            .send()
            .await
            .map_err(|e| format!("cannot reach the IdP's token endpoint: {e}"))?;
        let body = success(answer, "the IdP refused the token exchange").await?;
        body["access_token"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Failure::Failed("the IdP's token exchange gave no access_token".into()))
    }

    /// A token request: the form, the client's authentication, and a DPoP proof where
    /// DPoP is in use (sent again once with the server's nonce when it asks for one).
    pub(super) async fn token(
        &self,
        flow: &mut Flow,
        server: &Server,
        client: Option<&Client>,
        form: Form,
    ) -> Result<Got, Failure> {
        let dpop = self.dpop.get();
        for attempt in 0..2 {
            // Each attempt authenticates anew: an assertion is good for one request.
            let mut form = form.clone();
            let basic = self.authenticate(server, client, &mut form)?;
            let mut request = self
                .http
                .post(&server.token_endpoint)
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .header(reqwest::header::ACCEPT, "application/json")
                .body(encode(&form));
            if let Some(basic) = &basic {
                request = request.header(reqwest::header::AUTHORIZATION, format!("Basic {basic}"));
            }
            if let Some(key) = &dpop {
                let proof = key.dpop_proof(
                    "POST",
                    &server.token_endpoint,
                    None,
                    flow.as_nonce.as_deref(),
                );
                request = request.header(HeaderName::from_static("dpop"), proof);
            }
            let answer = request
                .send()
                .await
                .map_err(|e| format!("cannot reach the token endpoint: {e}"))?;
            let nonce = dpop_nonce(&answer);
            let (status, body) = read(answer).await;
            if nonce.is_some() {
                flow.as_nonce.clone_from(&nonce);
            }
            if !status.is_success() {
                if attempt == 0
                    && body["error"] == "use_dpop_nonce"
                    && nonce.is_some()
                    && dpop.is_some()
                {
                    continue;
                }
                return Err(Failure::Failed(format!(
                    "the token endpoint refused: {}",
                    said(&body, status)
                )));
            }
            let access = body["access_token"]
                .as_str()
                .ok_or_else(|| Failure::Failed("the token endpoint gave no access_token".into()))?;
            let kind = body["token_type"].as_str().unwrap_or("Bearer");
            return Ok(Got {
                access: access.to_string(),
                dpop: kind.eq_ignore_ascii_case("DPoP") && dpop.is_some(),
                refresh: body["refresh_token"].as_str().map(str::to_string),
            });
        }
        Err(Failure::Failed(
            "the token endpoint asked for a DPoP nonce twice".into(),
        ))
    }
}

impl Authorizer {
    /// The authorization code grant: the authorization request (PKCE S256, a state,
    /// the resource, the scope), its answer checked (state; `iss` against the issuer,
    /// RFC 9207), then the code exchanged.
    async fn authorization_code(
        &self,
        flow: &mut Flow,
        server: &Server,
        resource: &str,
        scope: &str,
        how: Authorize,
        why: &str,
    ) -> Result<Got, Failure> {
        let (listener, redirect) = self.redirect(flow).await?;
        let client = self.client(flow, server, &redirect).await?;
        if !server.guessed && !server.pkce_s256 {
            return Err(Refusal(format!(
                "the authorization server {} does not say it takes PKCE with S256 \
                 (code_challenge_methods_supported): refused, as the specification says",
                server.issuer
            ))
            .into());
        }
        let verifier = jose::random(32);
        let state = jose::random(16);
        let mut url = Url::parse(&server.authorization_endpoint)
            .map_err(|e| format!("the authorization endpoint is no URL: {e}"))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &client.id)
                .append_pair("redirect_uri", &redirect)
                .append_pair("state", &state)
                .append_pair("code_challenge", &jose::s256(&verifier))
                .append_pair("code_challenge_method", "S256")
                .append_pair("resource", resource);
            if !scope.is_empty() {
                q.append_pair("scope", scope);
            }
        }
        let back = match how {
            Authorize::Fetch => self.fetch_redirect(&url, &redirect).await?,
            Authorize::Browser => {
                super::register::browser_redirect(&listener, &url, &state, why).await?
            }
        };
        let code = answer_code(&back, &state, server)?;
        let form = vec![
            ("grant_type", "authorization_code".to_string()),
            ("code", code),
            ("redirect_uri", redirect),
            ("code_verifier", verifier),
            ("resource", resource.to_string()),
        ];
        self.token(flow, server, Some(&client), form).await
    }

    /// The redirect the authorization endpoint answers with, read without following.
    async fn fetch_redirect(&self, url: &Url, redirect: &str) -> Result<Url, Failure> {
        let answer = self
            .http
            .get(url.as_str())
            .send()
            .await
            .map_err(|e| format!("cannot reach the authorization endpoint: {e}"))?;
        let location = answer
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                format!(
                    "the authorization endpoint answered {} with no redirect: it wants a \
                     person (use --oauth browser)",
                    answer.status()
                )
            })?;
        let back = url
            .join(location)
            .map_err(|e| Failure::Failed(format!("the redirect is no URL: {e}")))?;
        let expected = Url::parse(redirect).map_err(|e| e.to_string())?;
        if back.origin() != expected.origin() || back.path() != expected.path() {
            return Err(Failure::Failed(format!(
                "the authorization endpoint redirected to {}, not back to the client: it \
                 wants a person (use --oauth browser)",
                back.origin().ascii_serialization()
            )));
        }
        Ok(back)
    }
}

impl Authorizer {
    /// The client's authentication at the token endpoint, added to `form`; the
    /// credentials for an `Authorization: Basic` header where that is the method.
    fn authenticate(
        &self,
        server: &Server,
        client: Option<&Client>,
        form: &mut Form,
    ) -> Result<Option<String>, Failure> {
        let Some(client) = client else {
            return Ok(None);
        };
        match client.method.as_str() {
            "client_secret_basic" => {
                return Ok(Some(basic_credentials(
                    &client.id,
                    client.secret.as_deref().unwrap_or_default(),
                )));
            }
            "client_secret_post" => {
                form.push(("client_id", client.id.clone()));
                form.push(("client_secret", client.secret.clone().unwrap_or_default()));
            }
            "private_key_jwt" => {
                let key = self.config.private_key.as_ref().ok_or_else(|| {
                    Failure::Failed("private_key_jwt needs --oauth-private-key".into())
                })?;
                form.push(("client_id", client.id.clone()));
                form.push(("client_assertion_type", ASSERTION_TYPE.into()));
                form.push((
                    "client_assertion",
                    key.client_assertion(&client.id, &server.issuer),
                ));
            }
            _ => form.push(("client_id", client.id.clone())),
        }
        Ok(None)
    }
}

/// The code from the authorization response, after its checks: no error, the state
/// sent, and an `iss` that is the issuer exactly (required where the server says it
/// sends one).
fn answer_code(back: &Url, state: &str, server: &Server) -> Result<String, Failure> {
    let get = |name: &str| -> Vec<String> {
        back.query_pairs()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
            .collect()
    };
    if get("state") != [state] {
        return Err(Failure::Failed(
            "the authorization response's state is not the one sent: refused".into(),
        ));
    }
    if let Some(error) = get("error").first() {
        let description = get("error_description")
            .first()
            .cloned()
            .unwrap_or_default();
        return Err(Failure::Failed(format!(
            "the authorization was refused: {error} {description}"
        )));
    }
    match get("iss").as_slice() {
        [] if server.iss_parameter_supported => {
            return Err(Refusal(
                "the authorization server says it sends `iss`, and its answer has none: refused (RFC 9207)".into(),
            )
            .into());
        }
        [] => {}
        [iss] if *iss == server.issuer => {}
        other => {
            return Err(Refusal(format!(
                "the authorization response's iss {other:?} is not the issuer {}: refused (RFC 9207)",
                server.issuer
            ))
            .into());
        }
    }
    match get("code").as_slice() {
        [code] if !code.is_empty() => Ok(code.clone()),
        _ => Err(Failure::Failed(
            "the authorization response has no code".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(iss_supported: bool) -> Server {
        Server {
            issuer: "http://as".into(),
            iss_parameter_supported: iss_supported,
            ..Server::default()
        }
    }

    fn code(query: &str, supported: bool) -> Result<String, String> {
        let back = Url::parse(&format!("http://127.0.0.1:1/callback?{query}")).unwrap();
        answer_code(&back, "s1", &server(supported)).map_err(|f| match f {
            Failure::Refused(Refusal(why)) => format!("refused for good: {why}"),
            Failure::Failed(why) => why,
        })
    }

    #[test]
    fn the_authorization_response_is_checked_as_rfc_9207_says() {
        assert_eq!(
            code("code=c&state=s1&iss=http%3A%2F%2Fas", true).unwrap(),
            "c"
        );
        assert_eq!(code("code=c&state=s1", false).unwrap(), "c");
        for (query, supported, says) in [
            ("code=c&state=s1", true, "has none"),
            (
                "code=c&state=s1&iss=http%3A%2F%2Fas%2F",
                true,
                "is not the issuer",
            ),
            (
                "code=c&state=s1&iss=https%3A%2F%2Fevil",
                false,
                "is not the issuer",
            ),
            ("code=c&state=s2&iss=http%3A%2F%2Fas", true, "state"),
            ("error=access_denied&state=s1", true, "access_denied"),
            ("state=s1&iss=http%3A%2F%2Fas", true, "no code"),
        ] {
            let err = code(query, supported).unwrap_err();
            assert!(err.contains(says), "{query}: {err}");
        }
        assert!(
            code("code=c&state=s1", true)
                .unwrap_err()
                .starts_with("refused for good")
        );
    }

    #[test]
    fn basic_credentials_encode_each_half_first() {
        use base64::Engine as _;
        let encoded = basic_credentials("a:b c", "p%w");
        let plain = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .unwrap();
        assert_eq!(String::from_utf8(plain).unwrap(), "a%3Ab%20c:p%25w");
    }
}
