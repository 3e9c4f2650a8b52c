//! The authorization-code flow with PKCE: a verifier of 32 random bytes and its S256
//! challenge, a random `state`, a public client registered dynamically (RFC 7591) for the
//! loopback redirect, the authorization URL for the user's browser, then the code exchanged
//! for tokens at the token endpoint; and the refresh-token grant for later connections.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use reqwest::Url;
use serde::Deserialize;
use serde_json::json;

use super::callback::CallbackListener;
use super::discovery::{discover, Discovered};
use super::error::OAuthError;
use super::http::http_client;
use super::store::{self, now_secs, StoredTokens};

/// A login waiting for the user: the URL to open, and the rest of the flow, which ends when
/// the browser comes back (tokens stored) or the time is up.
pub struct LoginStarted {
    pub authorization_url: String,
    pub completion: Pin<Box<dyn Future<Output = Result<(), OAuthError>> + Send>>,
}

impl std::fmt::Debug for LoginStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginStarted").finish_non_exhaustive()
    }
}

/// `n` random bytes as unpadded base64url.
fn random_text(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The S256 challenge of a PKCE verifier (RFC 7636).
fn challenge_of(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// Discovers, registers and listens; the login for server `name` at `server_url` then waits
/// at most `timeout` for the browser. Tokens go to `store`.
pub async fn start_login(
    name: &str,
    server_url: &str,
    store: PathBuf,
    scopes: Option<Vec<String>>,
    timeout: Duration,
) -> Result<LoginStarted, OAuthError> {
    let client = http_client().map_err(|reason| OAuthError::Discovery {
        url: server_url.to_string(),
        reason,
    })?;
    let discovered = discover(&client, server_url).await?;
    let listener = CallbackListener::bind(&random_text(9)).await?;
    let redirect_uri = listener.redirect_uri()?;
    let client_id = register(&client, &discovered, &redirect_uri).await?;
    let verifier = random_text(32);
    let state = random_text(16);
    let scopes = scopes.unwrap_or_else(|| discovered.scopes_supported.clone());
    let mut url =
        Url::parse(&discovered.authorization_endpoint).map_err(|error| OAuthError::Discovery {
            url: server_url.to_string(),
            reason: format!("bad authorization endpoint: {error}"),
        })?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client_id)
            .append_pair("state", &state)
            .append_pair("code_challenge", &challenge_of(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("resource", &discovered.resource);
        if !scopes.is_empty() {
            query.append_pair("scope", &scopes.join(" "));
        }
    }
    let name = name.to_string();
    let server_url = server_url.to_string();
    let completion = async move {
        let code = tokio::time::timeout(timeout, listener.code(&state))
            .await
            .map_err(|_| OAuthError::TimedOut)??;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", redirect_uri.as_str()),
            ("client_id", client_id.as_str()),
            ("code_verifier", verifier.as_str()),
            ("resource", discovered.resource.as_str()),
        ];
        let granted = token_request(&client, &discovered.token_endpoint, &form).await?;
        let tokens = StoredTokens {
            server_url,
            client_id,
            token_endpoint: discovered.token_endpoint.clone(),
            resource: discovered.resource.clone(),
            access_token: granted.access_token,
            refresh_token: granted.refresh_token,
            expires_at: granted.expires_in.map(|secs| now_secs() + secs),
        };
        store::save(&store, &name, &tokens)
    };
    Ok(LoginStarted {
        authorization_url: url.to_string(),
        completion: Box::pin(completion),
    })
}

/// Registers openturn as a public client for `redirect_uri` and returns its client id.
async fn register(
    client: &reqwest::Client,
    discovered: &Discovered,
    redirect_uri: &str,
) -> Result<String, OAuthError> {
    let endpoint = discovered.registration_endpoint.as_deref().ok_or_else(|| {
        OAuthError::Registration(
            "the authorization server offers no dynamic client registration".to_string(),
        )
    })?;
    let body = json!({
        "client_name": "openturn",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": "native",
    });
    let response = client
        .post(endpoint)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| OAuthError::Registration(error.without_url().to_string()))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|error| OAuthError::Registration(error.without_url().to_string()))?;
    if !status.is_success() {
        return Err(OAuthError::Registration(format!(
            "status {}",
            status.as_u16()
        )));
    }
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
    }
    serde_json::from_slice::<Registered>(&bytes)
        .map(|registered| registered.client_id)
        .map_err(|_| OAuthError::Registration("the answer names no client_id".to_string()))
}

#[derive(Deserialize)]
struct Granted {
    access_token: String,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

/// One form POST to the token endpoint. A refusal is described by its status and OAuth
/// `error` code only: the body of a token answer is never quoted.
async fn token_request(
    client: &reqwest::Client,
    endpoint: &str,
    form: &[(&str, &str)],
) -> Result<Granted, OAuthError> {
    let response = client
        .post(endpoint)
        .form(form)
        .send()
        .await
        .map_err(|error| OAuthError::TokenEndpoint(error.without_url().to_string()))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|error| OAuthError::TokenEndpoint(error.without_url().to_string()))?;
    if !status.is_success() {
        #[derive(Deserialize)]
        struct Refusal {
            error: String,
        }
        let code = serde_json::from_slice::<Refusal>(&bytes)
            .map(|refusal| format!(" ({})", refusal.error.chars().take(64).collect::<String>()))
            .unwrap_or_default();
        return Err(OAuthError::TokenEndpoint(format!(
            "status {}{code}",
            status.as_u16()
        )));
    }
    serde_json::from_slice::<Granted>(&bytes)
        .map_err(|_| OAuthError::TokenEndpoint("the answer holds no access_token".to_string()))
}

/// New tokens for `tokens` by its refresh token; the old refresh token stays when the server
/// issues none.
pub(super) async fn refresh(tokens: &StoredTokens) -> Result<StoredTokens, OAuthError> {
    let Some(refresh_token) = tokens.refresh_token.as_deref() else {
        return Err(OAuthError::TokenEndpoint(
            "the access token expired and there is no refresh token: log in again".to_string(),
        ));
    };
    let client = http_client().map_err(OAuthError::TokenEndpoint)?;
    let form = [
        ("grant_type", "refresh_token"),
        ("refresh_token", refresh_token),
        ("client_id", tokens.client_id.as_str()),
        ("resource", tokens.resource.as_str()),
    ];
    let granted = token_request(&client, &tokens.token_endpoint, &form).await?;
    Ok(StoredTokens {
        access_token: granted.access_token,
        refresh_token: granted
            .refresh_token
            .or_else(|| tokens.refresh_token.clone()),
        expires_at: granted.expires_in.map(|secs| now_secs() + secs),
        ..tokens.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_challenge_is_the_unpadded_base64url_sha256_of_the_verifier() {
        // Computed apart: `base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=")`.
        assert_eq!(
            challenge_of("dBjftJeZ4CVP-mJ92tBEhwxz7zIe7JfI2ylBoQgJjv8"),
            "Bn_TOmNpBc__OiNuPSKMo3gZmFHR2M_D0eLtKxQw9B0"
        );
        assert_eq!(random_text(32).len(), 43);
    }
}
