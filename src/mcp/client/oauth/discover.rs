//! Finding who authorizes a server: the server's challenge (`WWW-Authenticate`), its
//! protected resource metadata (RFC 9728), and its authorization server's metadata
//! (RFC 8414, or OpenID Connect discovery), with the 2025-03-26 fallbacks for a server
//! that publishes neither: the documents read (`Authorizer::discover`) and the rules
//! they are checked by.

use serde_json::Value;
use url::Url;

use super::{Failure, Refusal};

/// One challenge of a `WWW-Authenticate` header: its scheme and parameters.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub(crate) scheme: String,
    pub(crate) params: Vec<(String, String)>,
}

impl Challenge {
    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The challenges of a `WWW-Authenticate` header (RFC 9110 §11.6.1): each a scheme
/// followed by `name=value` or `name="quoted value"` parameters, comma-separated.
pub(crate) fn challenges(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut rest = header.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let token_end = rest
            .find(|c: char| c == '=' || c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        let token = &rest[..token_end];
        let after = rest[token_end..].trim_start_matches([' ', '\t']);
        if token.is_empty() {
            break;
        }
        if after.starts_with("==") || (after.starts_with('=') && token68_end(after)) {
            // A token68 padded with `=` after the scheme: kept as no parameter.
            rest = after.trim_start_matches('=');
            continue;
        }
        if let Some(value_start) = after.strip_prefix('=') {
            // A parameter of the current challenge.
            let (value, remainder) = param_value(value_start.trim_start());
            if let Some(current) = out.last_mut() {
                current.params.push((token.to_string(), value));
            }
            rest = remainder;
        } else {
            // A new scheme (a token68 after it is kept as no parameter).
            out.push(Challenge {
                scheme: token.to_string(),
                params: Vec::new(),
            });
            rest = after;
        }
    }
    out
}

/// Whether `=…` after a token is token68 padding: only `=` up to a comma or the end.
fn token68_end(after: &str) -> bool {
    after
        .trim_start_matches('=')
        .trim_start()
        .chars()
        .next()
        .is_none_or(|c| c == ',')
}

/// A parameter's value (quoted with backslash escapes, or a bare token) and what
/// follows it.
fn param_value(s: &str) -> (String, &str) {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, next)) = chars.next() {
                        value.push(next);
                    }
                }
                '"' => return (value, &quoted[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = s.find([',', ' ', '\t']).unwrap_or(s.len());
        (s[..end].to_string(), &s[end..])
    }
}

/// What the server's 401 or 403 said: where its resource metadata is, the scope it
/// wants, the error, and whether it asks for DPoP.
#[derive(Debug, Default, Clone)]
pub(crate) struct Asked {
    pub(crate) resource_metadata: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) dpop: bool,
}

impl Asked {
    pub(crate) fn read(header: &str) -> Asked {
        let all = challenges(header);
        // Prefer the challenge that names the metadata; any carries the rest.
        let get = |name: &str| all.iter().find_map(|c| c.param(name)).map(str::to_string);
        Asked {
            resource_metadata: get("resource_metadata"),
            scope: get("scope").filter(|s| !s.trim().is_empty()),
            error: get("error"),
            dpop: all.iter().any(|c| c.scheme.eq_ignore_ascii_case("DPoP")),
        }
    }
}

/// The protected resource metadata the client goes by.
#[derive(Debug, Clone)]
pub(crate) struct Resource {
    /// The resource identifier, exactly as published (sent as `resource`).
    pub(crate) resource: String,
    /// The authorization server's issuer identifier.
    pub(crate) issuer: String,
    pub(crate) scopes_supported: Vec<String>,
}

/// The authorization server's metadata, as far as the client uses it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Server {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) token_endpoint_auth_methods: Option<Vec<String>>,
    pub(crate) iss_parameter_supported: bool,
    pub(crate) client_id_metadata_document_supported: bool,
    pub(crate) dpop_algs: Vec<String>,
    /// Guessed by the 2025-03-26 fallback: the server published no metadata at all.
    pub(crate) guessed: bool,
    /// `code_challenge_methods_supported` lists S256.
    pub(crate) pkce_s256: bool,
}

impl Server {
    /// Whether the token endpoint takes this client authentication (all do, where the
    /// metadata does not say).
    pub(crate) fn offers_auth(&self, method: &str) -> bool {
        self.token_endpoint_auth_methods
            .as_ref()
            .is_none_or(|list| list.iter().any(|m| m == method))
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The well-known URLs of a resource's metadata, in the order RFC 9728 and the MCP
/// specification try them: the one the challenge named, the path-based one, the root.
pub(crate) fn resource_metadata_urls(server: &Url, named: Option<&str>) -> Vec<String> {
    let mut urls = Vec::new();
    if let Some(named) = named {
        urls.push(named.to_string());
    }
    let origin = origin(server);
    let path = server.path().trim_end_matches('/');
    if !path.is_empty() {
        urls.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    urls.push(format!("{origin}/.well-known/oauth-protected-resource"));
    urls
}

/// The well-known URLs of an authorization server's metadata (RFC 8414 §3.1, then
/// OpenID Connect discovery, both with the issuer's path inserted, then appended).
pub(crate) fn server_metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = origin(issuer);
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// `scheme://host[:port]`, no slash after.
pub(crate) fn origin(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Reads protected resource metadata and checks it is the server's: the published
/// resource must be the server's URL or one above it (same origin, a path prefix), or
/// the metadata could send the client's grant to someone else's resource.
pub(crate) fn resource(doc: &Value, server: &Url) -> Result<Resource, String> {
    let resource = doc["resource"]
        .as_str()
        .ok_or("the resource metadata has no `resource`")?
        .to_string();
    let published = Url::parse(&resource)
        .map_err(|e| format!("the resource metadata's `resource` {resource:?} is no URL: {e}"))?;
    let within = |prefix: &str, path: &str| {
        let prefix = prefix.trim_end_matches('/');
        path == prefix || path.starts_with(&format!("{prefix}/")) || prefix.is_empty()
    };
    if origin(&published) != origin(server) || !within(published.path(), server.path()) {
        return Err(format!(
            "the resource metadata is for {resource}, not for {server}: refused, as a \
             token for it could be used elsewhere"
        ));
    }
    let issuer = doc["authorization_servers"]
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or("the resource metadata names no authorization server")?
        .to_string();
    Ok(Resource {
        resource,
        issuer,
        scopes_supported: strings(&doc["scopes_supported"]),
    })
}

/// Reads authorization server metadata fetched for `issuer`, whose `issuer` must be
/// that identifier exactly (RFC 8414 §3.3).
pub(crate) fn server(doc: &Value, issuer: &str) -> Result<Server, String> {
    let said = doc["issuer"].as_str().unwrap_or_default();
    if said != issuer {
        return Err(format!(
            "the authorization server metadata fetched for {issuer} says its issuer is \
             {said:?}: refused (RFC 8414 §3.3)"
        ));
    }
    let endpoint = |name: &str| {
        doc[name]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("the authorization server metadata has no `{name}`"))
    };
    Ok(Server {
        issuer: issuer.to_string(),
        authorization_endpoint: endpoint("authorization_endpoint").unwrap_or_default(),
        token_endpoint: endpoint("token_endpoint")?,
        registration_endpoint: doc["registration_endpoint"].as_str().map(str::to_string),
        scopes_supported: strings(&doc["scopes_supported"]),
        token_endpoint_auth_methods: doc["token_endpoint_auth_methods_supported"]
            .is_array()
            .then(|| strings(&doc["token_endpoint_auth_methods_supported"])),
        iss_parameter_supported: doc["authorization_response_iss_parameter_supported"]
            .as_bool()
            .unwrap_or(false),
        client_id_metadata_document_supported: doc["client_id_metadata_document_supported"]
            .as_bool()
            .unwrap_or(false),
        dpop_algs: strings(&doc["dpop_signing_alg_values_supported"]),
        guessed: false,
        pkce_s256: strings(&doc["code_challenge_methods_supported"])
            .iter()
            .any(|m| m == "S256"),
    })
}

/// Refuses endpoints that would carry a code, a secret or a token in the clear to a
/// host the MCP traffic does not already go to: each must be `https`, or on a loopback
/// host, or of the MCP server's own origin.
pub(crate) fn endpoints_safe(server: &Server, mcp: &Url) -> Result<(), String> {
    let loopback = |url: &Url| match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let endpoints = [
        Some(&server.authorization_endpoint),
        Some(&server.token_endpoint),
        server.registration_endpoint.as_ref(),
    ];
    for endpoint in endpoints.into_iter().flatten().filter(|e| !e.is_empty()) {
        let url = Url::parse(endpoint).map_err(|e| {
            format!("the authorization server's endpoint {endpoint:?} is no URL: {e}")
        })?;
        let safe = url.scheme() == "https" || loopback(&url) || origin(&url) == origin(mcp);
        if !safe {
            return Err(format!(
                "the authorization server's endpoint {endpoint} is plain http to another \
                 host: refused"
            ));
        }
    }
    Ok(())
}

/// The issuer of metadata found at a server's origin under the 2025-03-26 rules (no
/// resource metadata): the one it says, where that is of the same origin.
pub(crate) fn legacy_issuer(doc: &Value, origin_url: &Url) -> Result<String, String> {
    let said = doc["issuer"].as_str().unwrap_or_default();
    match Url::parse(said) {
        Ok(url) if origin(&url) == origin(origin_url) => Ok(said.to_string()),
        _ => Err(format!(
            "the authorization server metadata at {} says its issuer is {said:?}, of \
             another origin: refused",
            origin(origin_url)
        )),
    }
}

/// The 2025-03-26 fallback for a server with no metadata at all: the endpoints at
/// the root of the server's origin.
pub(crate) fn fallback_server(issuer: &str) -> Server {
    Server {
        issuer: issuer.to_string(),
        authorization_endpoint: format!("{issuer}/authorize"),
        token_endpoint: format!("{issuer}/token"),
        registration_endpoint: Some(format!("{issuer}/register")),
        guessed: true,
        ..Server::default()
    }
}

impl super::Authorizer {
    /// A JSON document at `url`, or `None` where there is none (any status but 2xx).
    /// A URL that cannot be reached is no document either: the next is tried.
    async fn get_json(&self, url: &str) -> Option<Value> {
        let answer = match self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                tracing::debug!(url, error = %e, "OAuth metadata not read");
                return None;
            }
        };
        if !answer.status().is_success() {
            return None;
        }
        answer.json::<Value>().await.ok().filter(Value::is_object)
    }

    /// The resource metadata and the authorization server behind this server; for a
    /// server with no resource metadata, the 2025-03-26 rules (its origin as the
    /// authorization server, its metadata or else its default endpoints).
    pub(super) async fn discover(
        &self,
        asked: &Asked,
    ) -> Result<(Option<Resource>, Server), Failure> {
        let mut found = None;
        for url in resource_metadata_urls(&self.server, asked.resource_metadata.as_deref()) {
            if let Some(doc) = self.get_json(&url).await {
                found = Some(resource(&doc, &self.server).map_err(Refusal)?);
                break;
            }
        }
        let issuer = found
            .as_ref()
            .map_or_else(|| origin(&self.server), |r| r.issuer.clone());
        let issuer_url = Url::parse(&issuer)
            .map_err(|e| format!("the authorization server {issuer:?} is no URL: {e}"))?;
        for url in server_metadata_urls(&issuer_url) {
            if let Some(doc) = self.get_json(&url).await {
                let expected = match &found {
                    Some(_) => issuer.clone(),
                    // Under the 2025-03-26 rules nobody named the issuer: the server's
                    // origin is the authorization server, and the metadata found there
                    // says its issuer, which must be of that origin.
                    None => legacy_issuer(&doc, &issuer_url).map_err(Refusal)?,
                };
                let server = server(&doc, &expected).map_err(Refusal)?;
                endpoints_safe(&server, &self.server).map_err(Refusal)?;
                return Ok((found, server));
            }
        }
        if found.is_some() {
            return Err(Failure::Failed(format!(
                "the authorization server {issuer} publishes no metadata"
            )));
        }
        Ok((None, fallback_server(&issuer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_challenge_is_read_with_quoted_and_bare_parameters() {
        let asked = Asked::read(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="http://h/.well-known/x", error_description="say \"no\"""#,
        );
        assert_eq!(asked.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(asked.scope.as_deref(), Some("a b"));
        assert_eq!(
            asked.resource_metadata.as_deref(),
            Some("http://h/.well-known/x")
        );
        assert!(!asked.dpop);
        let all = challenges(r#"DPoP error=use_dpop_nonce, Bearer realm="r""#);
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].param("error"), Some("use_dpop_nonce"));
        assert_eq!(all[1].scheme, "Bearer");
        assert!(Asked::read("DPoP resource_metadata=\"u\"").dpop);
        let padded = challenges(r#"Negotiate abc==, Bearer resource_metadata="m""#);
        assert_eq!(padded.len(), 2, "{padded:?}");
        assert_eq!(padded[1].param("resource_metadata"), Some("m"));
    }

    #[test]
    fn metadata_urls_follow_the_specified_order() {
        let server = Url::parse("http://h:1/mcp").unwrap();
        assert_eq!(
            resource_metadata_urls(&server, None),
            [
                "http://h:1/.well-known/oauth-protected-resource/mcp",
                "http://h:1/.well-known/oauth-protected-resource"
            ]
        );
        let issuer = Url::parse("http://a/tenant1").unwrap();
        assert_eq!(
            server_metadata_urls(&issuer),
            [
                "http://a/.well-known/oauth-authorization-server/tenant1",
                "http://a/.well-known/openid-configuration/tenant1",
                "http://a/tenant1/.well-known/openid-configuration"
            ]
        );
    }

    #[test]
    fn resource_metadata_for_another_resource_is_refused() {
        let server = Url::parse("http://localhost:9/mcp").unwrap();
        let doc = |r: &str| json!({"resource": r, "authorization_servers": ["http://as"]});
        assert!(resource(&doc("http://localhost:9/mcp"), &server).is_ok());
        assert!(resource(&doc("http://localhost:9"), &server).is_ok());
        for other in [
            "https://evil.example.com/mcp",
            "http://localhost:9/mcpx",
            "http://localhost:10/mcp",
        ] {
            let err = resource(&doc(other), &server).unwrap_err();
            assert!(err.contains("refused"), "{other}: {err}");
        }
    }

    #[test]
    fn a_legacy_servers_metadata_may_name_an_issuer_of_its_own_origin_only() {
        let at = Url::parse("http://h:1").unwrap();
        let doc = |i: &str| json!({"issuer": i});
        assert_eq!(
            legacy_issuer(&doc("http://h:1/oauth"), &at).unwrap(),
            "http://h:1/oauth"
        );
        assert!(legacy_issuer(&doc("http://evil:1/oauth"), &at).is_err());
        assert!(legacy_issuer(&json!({}), &at).is_err());
    }

    #[test]
    fn endpoints_in_the_clear_go_only_where_the_traffic_already_goes() {
        let mcp = Url::parse("http://10.0.0.5:8000/mcp").unwrap();
        let with = |token: &str| Server {
            token_endpoint: token.into(),
            ..Server::default()
        };
        for ok in [
            "https://as.example/token",
            "http://localhost:9/token",
            "http://127.0.0.1:9/token",
            "http://10.0.0.5:8000/token",
        ] {
            assert!(endpoints_safe(&with(ok), &mcp).is_ok(), "{ok}");
        }
        let err = endpoints_safe(&with("http://as.example/token"), &mcp).unwrap_err();
        assert!(err.contains("refused"), "{err}");
    }

    #[test]
    fn metadata_whose_issuer_differs_is_refused_without_normalizing() {
        let doc = json!({"issuer": "http://as/", "token_endpoint": "http://as/token"});
        assert!(server(&doc, "http://as").unwrap_err().contains("refused"));
        assert!(server(&doc, "http://as/").is_ok());
    }
}
