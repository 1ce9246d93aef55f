//! `structs-console client`'s OAuth options, read into a [`Config`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::jose::Es256;
use super::{Authorize, Config, Grant};

/// How the client gets a token when a URL server asks for OAuth (a 401 or 403 with
/// `WWW-Authenticate`). Not used with --auth-token, nor for a command.
#[derive(Debug, Clone, clap::Args)]
pub struct OAuthArgs {
    /// `browser`: print the authorization URL on stderr and wait for the browser's
    /// redirect on a loopback port; `fetch`: request the authorization URL itself and
    /// take the code from its redirect (servers that authorize without a person, as
    /// test servers do); `off`: a server that asks for OAuth is refused.
    #[arg(long = "oauth", value_name = "HOW", default_value = "browser",
          value_parser = ["browser", "fetch", "off"])]
    pub mode: String,

    /// The grant to ask for a token by.
    #[arg(long = "oauth-grant", value_name = "GRANT", default_value = "authorization-code",
          value_parser = ["authorization-code", "client-credentials", "jwt-bearer", "enterprise"])]
    pub grant: String,

    /// A client id registered beforehand (else the client uses --oauth-client-metadata-url
    /// where the server takes one, or registers itself).
    #[arg(long = "oauth-client-id", value_name = "ID")]
    pub client_id: Option<String>,

    /// The authorization server (its issuer URL) the pre-registered client or the
    /// workload's assertion is for: they are sent to no other. Without it they go to
    /// the first the server names, and to no other after.
    #[arg(long = "oauth-issuer", value_name = "URL")]
    pub issuer: Option<String>,

    /// The pre-registered client's secret. Prefer the environment variable: a flag
    /// shows in the process list.
    #[arg(
        long = "oauth-client-secret",
        value_name = "SECRET",
        env = "STRUCTS_CONSOLE_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: Option<String>,

    /// The pre-registered client's private key (a P-256 PKCS#8 PEM file): the client
    /// authenticates with a signed assertion (`private_key_jwt`, ES256).
    #[arg(long = "oauth-private-key", value_name = "PEM")]
    pub private_key: Option<PathBuf>,

    /// The URL of this client's metadata document (a Client ID Metadata Document),
    /// used as its client id where the authorization server takes one.
    #[arg(long = "oauth-client-metadata-url", value_name = "URL")]
    pub client_metadata_url: Option<String>,

    /// With `--oauth-grant jwt-bearer`: a file holding the JWT the workload presents.
    #[arg(long = "oauth-assertion-file", value_name = "PATH")]
    pub assertion_file: Option<PathBuf>,

    /// With `--oauth-grant enterprise`: the enterprise IdP's token endpoint.
    #[arg(long = "oauth-idp-token-endpoint", value_name = "URL")]
    pub idp_token_endpoint: Option<String>,

    /// With `--oauth-grant enterprise`: the client id at the IdP.
    #[arg(long = "oauth-idp-client-id", value_name = "ID")]
    pub idp_client_id: Option<String>,

    /// With `--oauth-grant enterprise`: a file holding the IdP's ID token for the user.
    #[arg(long = "oauth-id-token-file", value_name = "PATH")]
    pub id_token_file: Option<PathBuf>,
}

fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| format!("cannot read {what} {}: {e}", path.display()))
}

impl OAuthArgs {
    /// The configuration these options give; `None` with `--oauth off`.
    ///
    /// # Errors
    ///
    /// When a grant lacks what it needs, or a file does not read.
    pub fn config(&self) -> Result<Option<Config>, String> {
        let authorize = match self.mode.as_str() {
            "off" => return Ok(None),
            "fetch" => Authorize::Fetch,
            _ => Authorize::Browser,
        };
        let need = |what: Option<&str>, flag: &str| {
            what.map(str::to_string)
                .ok_or_else(|| format!("--oauth-grant {} needs {flag}", self.grant))
        };
        let grant = match self.grant.as_str() {
            "client-credentials" => {
                need(self.client_id.as_deref(), "--oauth-client-id")?;
                if self.client_secret.is_none() && self.private_key.is_none() {
                    return Err("--oauth-grant client-credentials needs \
                                --oauth-client-secret or --oauth-private-key"
                        .into());
                }
                Grant::ClientCredentials
            }
            "jwt-bearer" => {
                let path = self
                    .assertion_file
                    .as_deref()
                    .ok_or("--oauth-grant jwt-bearer needs --oauth-assertion-file")?;
                Grant::JwtBearer {
                    assertion: read_secret(path, "the assertion")?,
                }
            }
            "enterprise" => {
                need(self.client_id.as_deref(), "--oauth-client-id")?;
                let path = self
                    .id_token_file
                    .as_deref()
                    .ok_or("--oauth-grant enterprise needs --oauth-id-token-file")?;
                Grant::Enterprise {
                    idp_token_endpoint: need(
                        self.idp_token_endpoint.as_deref(),
                        "--oauth-idp-token-endpoint",
                    )?,
                    idp_client_id: self.idp_client_id.clone(),
                    id_token: read_secret(path, "the ID token")?,
                }
            }
            _ => Grant::AuthorizationCode(authorize),
        };
        let private_key = match &self.private_key {
            Some(path) => Some(Arc::new(
                Es256::from_pem(&read_secret(path, "the private key")?)
                    .map_err(|e| format!("--oauth-private-key {}: {e}", path.display()))?,
            )),
            None => None,
        };
        Ok(Some(Config {
            grant,
            issuer: self.issuer.clone(),
            client_id: self.client_id.clone(),
            client_secret: self.client_secret.clone(),
            private_key,
            client_metadata_url: self.client_metadata_url.clone(),
        }))
    }
}
