//! The client at an authorization server, for the authorization code grant: the one
//! the operator pre-registered, a Client ID Metadata Document URL where the server
//! takes one, or one registered there (RFC 7591); and the loopback redirect the
//! browser comes back to.

use std::sync::Arc;

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;
use url::Url;

use super::discover::Server;
use super::{Authorizer, Client, Failure, Flow, Refusal, success};

/// The most of a browser's request to the redirect that is read.
const MAX_REDIRECT_REQUEST: usize = 16 * 1024;

/// How long a connection to the redirect listener may take to send its request.
const REDIRECT_READ: std::time::Duration = std::time::Duration::from_secs(5);

impl Authorizer {
    /// The loopback redirect URI, its listener bound on first use and kept, so that a
    /// registered client's redirect stays valid for the process.
    pub(super) async fn redirect(
        &self,
        flow: &mut Flow,
    ) -> Result<(Arc<TcpListener>, String), Failure> {
        if let Some(redirect) = &flow.redirect {
            return Ok(redirect.clone());
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("cannot listen for the authorization's redirect: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot listen for the authorization's redirect: {e}"))?
            .port();
        let uri = format!("http://127.0.0.1:{port}/callback");
        let redirect = (Arc::new(listener), uri);
        flow.redirect = Some(redirect.clone());
        Ok(redirect)
    }

    /// This authorization server's client: kept from before, pre-registered, the
    /// metadata document URL, or registered now.
    pub(super) async fn client(
        &self,
        flow: &mut Flow,
        server: &Server,
        redirect: &str,
    ) -> Result<Client, Failure> {
        if let Some(client) = flow.clients.get(&server.issuer) {
            return Ok(client.clone());
        }
        let client = if self.config.client_id.is_some() {
            self.preregistered(flow, server)?
        } else if let Some(url) = self
            .config
            .client_metadata_url
            .as_ref()
            .filter(|_| server.client_id_metadata_document_supported)
        {
            Client {
                id: url.clone(),
                secret: None,
                method: "none".into(),
            }
        } else if let Some(endpoint) = &server.registration_endpoint {
            self.register(endpoint, server, redirect).await?
        } else {
            return Err(Failure::Failed(format!(
                "the authorization server {} registers no clients and takes no client \
                 metadata URL: give a client id (--oauth-client-id)",
                server.issuer
            )));
        };
        flow.clients.insert(server.issuer.clone(), client.clone());
        Ok(client)
    }

    /// The client the operator gave, with the token endpoint authentication it can
    /// do: a private key, a secret (Basic where the server takes it), or none.
    pub(super) fn preregistered(
        &self,
        flow: &mut Flow,
        server: &Server,
    ) -> Result<Client, Failure> {
        let id = self.config.client_id.clone().ok_or_else(|| {
            Failure::Failed("this grant needs a client id (--oauth-client-id)".into())
        })?;
        self.credentials_go_to(flow, server)?;
        let method = if self.config.private_key.is_some() {
            "private_key_jwt"
        } else if self.config.client_secret.is_some() {
            if server.offers_auth("client_secret_basic")
                || !server.offers_auth("client_secret_post")
            {
                "client_secret_basic"
            } else {
                "client_secret_post"
            }
        } else {
            "none"
        };
        Ok(Client {
            id,
            secret: self.config.client_secret.clone(),
            method: method.into(),
        })
    }

    /// Refuses to show the operator's own credentials (a pre-registered client, a
    /// workload's assertion) to an authorization server other than theirs: the one
    /// `--oauth-issuer` names, else the first they were used with in this process.
    pub(super) fn credentials_go_to(
        &self,
        flow: &mut Flow,
        server: &Server,
    ) -> Result<(), Failure> {
        let expected = self
            .config
            .issuer
            .clone()
            .or_else(|| flow.credentials_issuer.clone())
            .unwrap_or_else(|| server.issuer.clone());
        if expected != server.issuer {
            return Err(Refusal(format!(
                "the server sends the client to the authorization server {}, and the \
                 credentials given are for {expected}: refused (--oauth-issuer names theirs)",
                server.issuer
            ))
            .into());
        }
        flow.credentials_issuer = Some(expected);
        Ok(())
    }

    /// Dynamic client registration, as a native application: a public client where
    /// the server takes one, else one with a secret.
    async fn register(
        &self,
        endpoint: &str,
        server: &Server,
        redirect: &str,
    ) -> Result<Client, Failure> {
        let method = ["none", "client_secret_basic", "client_secret_post"]
            .into_iter()
            .find(|m| server.offers_auth(m))
            .unwrap_or("client_secret_basic");
        let answer = self
            .http
            .post(endpoint)
            .json(&json!({
                "client_name": "structs-console",
                "redirect_uris": [redirect],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": method,
                "application_type": "native",
            }))
            .send()
            .await
            .map_err(|e| format!("cannot reach the registration endpoint: {e}"))?;
        let body = success(
            answer,
            "the authorization server refused to register the client",
        )
        .await?;
        let id = body["client_id"]
            .as_str()
            .ok_or_else(|| Failure::Failed("the registration gave no client_id".into()))?;
        let secret = body["client_secret"].as_str().map(str::to_string);
        // The method the server registered; where it says none, the one asked for
        // (Basic, if it gave a secret to a client that asked to be public).
        let asked = if secret.is_some() && method == "none" {
            "client_secret_basic"
        } else {
            method
        };
        let method = body["token_endpoint_auth_method"]
            .as_str()
            .unwrap_or(asked)
            .to_string();
        Ok(Client {
            id: id.to_string(),
            secret,
            method,
        })
    }
}

/// The browser's way: the URL is printed on stderr, and the redirect is awaited on the
/// loopback listener (other paths are answered 404 and the wait goes on).
pub(super) async fn browser_redirect(
    listener: &TcpListener,
    url: &Url,
    state: &str,
    why: &str,
) -> Result<Url, Failure> {
    eprintln!("structs-console: the server {why}. Open this URL in a browser:\n\n  {url}\n");
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|e| format!("the authorization's redirect listener failed: {e}"))?;
        // A connection that says nothing (a browser's preconnect) is let go.
        let Ok(target) = tokio::time::timeout(REDIRECT_READ, request_target(&mut stream)).await
        else {
            continue;
        };
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let back = Url::parse(&format!("http://{local}{target}"))
            .ok()
            .filter(|u| u.path() == "/callback");
        // Only this authorization's answer ends the wait: another (a stale tab, a
        // page that guessed the port) is turned away.
        let ours = back
            .as_ref()
            .is_some_and(|u| u.query_pairs().any(|(k, v)| k == "state" && v == state));
        let (status, page) = match (&back, ours) {
            (Some(_), true) => (
                "200 OK",
                "Authorization received. You can close this page and return to the terminal.",
            ),
            (Some(_), false) => ("400 Bad Request", "This is not the authorization awaited."),
            (None, _) => ("404 Not Found", ""),
        };
        let page = format!("<!doctype html><title>structs-console</title><p>{page}</p>");
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            )
            .await;
        if let (Some(back), true) = (back, ours) {
            return Ok(back);
        }
    }
}

/// The target of the request on `stream` (`/callback?…`), read up to its blank line
/// or [`MAX_REDIRECT_REQUEST`] bytes; empty where it is no GET.
async fn request_target(stream: &mut tokio::net::TcpStream) -> String {
    let mut buf = vec![0u8; MAX_REDIRECT_REQUEST];
    let mut len = 0;
    while len < buf.len() {
        match stream.read(&mut buf[len..]).await {
            Ok(0) | Err(_) => break,
            Ok(n) => len += n,
        }
        if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let head = String::from_utf8_lossy(&buf[..len]);
    head.lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_redirect_listener_takes_the_callback_and_answers_other_paths_404() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let browser = tokio::spawn(async move {
            let http = reqwest::Client::new();
            let other = http
                .get(format!("http://127.0.0.1:{port}/favicon.ico"))
                .send()
                .await
                .unwrap();
            let stale = http
                .get(format!(
                    "http://127.0.0.1:{port}/callback?code=c0&state=old"
                ))
                .send()
                .await
                .unwrap();
            let back = http
                .get(format!("http://127.0.0.1:{port}/callback?code=c1&state=s"))
                .send()
                .await
                .unwrap();
            (
                [
                    other.status().as_u16(),
                    stale.status().as_u16(),
                    back.status().as_u16(),
                ],
                back.text().await.unwrap(),
            )
        });
        let url = Url::parse("http://as/authorize").unwrap();
        let wait = std::time::Duration::from_secs(20);
        let back = tokio::time::timeout(wait, browser_redirect(&listener, &url, "s", "asks"))
            .await
            .expect("the browser came back")
            .ok()
            .unwrap();
        assert_eq!(back.path(), "/callback");
        assert_eq!(back.query(), Some("code=c1&state=s"));
        let (statuses, page) = browser.await.unwrap();
        assert_eq!(statuses, [404, 400, 200]);
        assert!(page.contains("Authorization received"), "{page}");
    }
}
