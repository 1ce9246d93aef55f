//! The authorizer against a small authorization server of our own (axum): what a
//! conformance run does not reach, a refresh and a challenge to an older token.

use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::*;

/// What the server saw: the grant types of its token requests.
#[derive(Clone, Default)]
struct Seen {
    base: String,
    grants: Arc<Mutex<Vec<String>>>,
}

async fn prm(State(s): State<Seen>) -> Json<Value> {
    Json(json!({
        "resource": format!("{}/mcp", s.base),
        "authorization_servers": [s.base],
        "scopes_supported": ["read"],
    }))
}

async fn metadata(State(s): State<Seen>) -> Json<Value> {
    Json(json!({
        "issuer": s.base,
        "authorization_endpoint": format!("{}/authorize", s.base),
        "token_endpoint": format!("{}/token", s.base),
        "registration_endpoint": format!("{}/register", s.base),
        "scopes_supported": ["read", "offline_access"],
        "authorization_response_iss_parameter_supported": true,
        "code_challenge_methods_supported": ["S256"],
    }))
}

async fn register(Json(body): Json<Value>) -> impl IntoResponse {
    assert_eq!(body["application_type"], "native");
    (
        axum::http::StatusCode::CREATED,
        Json(json!({"client_id": "c1"})),
    )
}

async fn authorize(State(s): State<Seen>, Query(q): Query<Vec<(String, String)>>) -> Redirect {
    let get = |k: &str| {
        q.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("scope"), "offline_access read");
    let mut back = Url::parse(&get("redirect_uri")).unwrap();
    back.query_pairs_mut()
        .append_pair("code", "abc")
        .append_pair("state", &get("state"))
        .append_pair("iss", &s.base);
    Redirect::to(back.as_str())
}

async fn token(State(s): State<Seen>, body: String) -> Json<Value> {
    let f: Vec<(String, String)> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let get = |k: &str| f.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    let grant = get("grant_type").unwrap();
    s.grants.lock().unwrap().push(grant.clone());
    Json(match grant.as_str() {
        "authorization_code" => {
            assert_eq!(get("resource").unwrap(), format!("{}/mcp", s.base));
            json!({"access_token": "t1", "token_type": "Bearer", "refresh_token": "r1"})
        }
        _ => {
            assert_eq!(get("refresh_token").as_deref(), Some("r1"));
            json!({"access_token": "t2", "token_type": "Bearer"})
        }
    })
}

async fn serve() -> Seen {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let seen = Seen {
        base: format!("http://{}", listener.local_addr().unwrap()),
        ..Seen::default()
    };
    let app = Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    seen
}

fn bearer(auth: &Authorizer, url: &str) -> (String, u64) {
    let (headers, generation) = auth.headers("POST", url);
    let value = headers
        .iter()
        .find(|(n, _)| n == reqwest::header::AUTHORIZATION)
        .map(|(_, v)| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (value, generation)
}

#[tokio::test]
async fn a_token_is_got_refreshed_and_not_got_twice_for_one_challenge() {
    let seen = serve().await;
    let url = format!("{}/mcp", seen.base);
    let config = Config {
        grant: Grant::AuthorizationCode(Authorize::Fetch),
        issuer: None,
        client_id: None,
        client_secret: None,
        private_key: None,
        client_metadata_url: None,
    };
    let auth = Authorizer::new(config, &url).unwrap();
    assert_eq!(bearer(&auth, &url), (String::new(), 0));
    let mut tries = 0;
    auth.challenged(&url, "Bearer", false, 0, &mut tries)
        .await
        .unwrap();
    assert_eq!(bearer(&auth, &url), ("Bearer t1".into(), 1));
    // A request sent with the first token before it was replaced: no new grant.
    let mut other = 0;
    auth.challenged(&url, "Bearer", false, 0, &mut other)
        .await
        .unwrap();
    assert_eq!(*seen.grants.lock().unwrap(), ["authorization_code"]);
    // The token is refused: the refresh token gets another.
    auth.challenged(&url, "Bearer", false, 1, &mut tries)
        .await
        .unwrap();
    assert_eq!(bearer(&auth, &url), ("Bearer t2".into(), 2));
    assert_eq!(
        *seen.grants.lock().unwrap(),
        ["authorization_code", "refresh_token"]
    );
    // A 403 for a scope already asked for is not asked again.
    let err = auth
        .challenged(
            &url,
            r#"Bearer error="insufficient_scope", scope="read""#,
            true,
            2,
            &mut tries,
        )
        .await
        .unwrap_err();
    assert!(err.contains("asked for and not granted"), "{err}");
    // Nor does a request go on past its third authorization.
    let mut spent = MAX_AUTHORIZATIONS;
    let err = auth
        .challenged(&url, "Bearer", false, 2, &mut spent)
        .await
        .unwrap_err();
    assert!(err.contains("after 3 authorizations"), "{err}");
}
