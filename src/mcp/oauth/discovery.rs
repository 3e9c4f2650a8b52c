//! Finding a server's authorization server, as the MCP authorization spec orders it: the
//! `resource_metadata` a 401's `WWW-Authenticate` names, else the protected-resource metadata
//! at the server's well-known paths (RFC 9728); its first `authorization_servers` entry (the
//! server's own origin when there is no such metadata) is then asked for its metadata at the
//! OAuth well-known path, else the OpenID one (RFC 8414).

use reqwest::{StatusCode, Url};
use serde::Deserialize;
use serde_json::Value;

use super::error::OAuthError;

/// What the flow needs to know about the authorization server.
#[derive(Debug, Clone)]
pub(super) struct Discovered {
    /// The MCP server as a protected resource (the `resource` parameter).
    pub resource: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    /// Scopes the resource says it supports, asked for when the client names none.
    pub scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
struct ResourceMetadata {
    #[serde(default)]
    resource: Option<String>,
    #[serde(default)]
    authorization_servers: Vec<String>,
    #[serde(default)]
    scopes_supported: Vec<String>,
}

#[derive(Deserialize)]
struct ServerMetadata {
    authorization_endpoint: String,
    token_endpoint: String,
    #[serde(default)]
    registration_endpoint: Option<String>,
    #[serde(default)]
    code_challenge_methods_supported: Option<Vec<String>>,
}

pub(super) async fn discover(
    client: &reqwest::Client,
    server_url: &str,
) -> Result<Discovered, OAuthError> {
    let failed = |reason: String| OAuthError::Discovery {
        url: server_url.to_string(),
        reason,
    };
    let url = Url::parse(server_url).map_err(|error| failed(error.to_string()))?;
    let origin = url.origin().ascii_serialization();
    let mut candidates = Vec::new();
    if let Some(named) = challenge_metadata_url(client, &url).await {
        candidates.push(named);
    }
    let path = url.path().trim_end_matches('/');
    if !path.is_empty() {
        candidates.push(format!(
            "{origin}/.well-known/oauth-protected-resource{path}"
        ));
    }
    candidates.push(format!("{origin}/.well-known/oauth-protected-resource"));
    let mut resource_metadata = None;
    for candidate in candidates {
        if let Some(found) = get_json::<ResourceMetadata>(client, &candidate).await {
            resource_metadata = Some(found);
            break;
        }
    }
    let (resource, issuer, scopes_supported) = match resource_metadata {
        Some(found) => (
            found.resource.unwrap_or_else(|| server_url.to_string()),
            found
                .authorization_servers
                .into_iter()
                .next()
                .unwrap_or_else(|| origin.clone()),
            found.scopes_supported,
        ),
        None => (server_url.to_string(), origin.clone(), Vec::new()),
    };
    let metadata = server_metadata(client, &issuer)
        .await
        .ok_or_else(|| failed(format!("no authorization server metadata at {issuer}")))?;
    let offers_s256 = metadata
        .code_challenge_methods_supported
        .as_ref()
        .is_none_or(|methods| methods.iter().any(|method| method == "S256"));
    if !offers_s256 {
        return Err(failed(
            "the authorization server does not support PKCE with S256".to_string(),
        ));
    }
    Ok(Discovered {
        resource,
        authorization_endpoint: metadata.authorization_endpoint,
        token_endpoint: metadata.token_endpoint,
        registration_endpoint: metadata.registration_endpoint,
        scopes_supported,
    })
}

/// The `resource_metadata` URL of the server's 401 challenge, when it gives one.
async fn challenge_metadata_url(client: &reqwest::Client, url: &Url) -> Option<String> {
    let response = client.get(url.clone()).send().await.ok()?;
    if response.status() != StatusCode::UNAUTHORIZED {
        return None;
    }
    let challenge = response
        .headers()
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()?;
    let (_, after) = challenge.split_once("resource_metadata=")?;
    let value = after.trim_start_matches('"');
    let end = value.find(['"', ',', ' ']).unwrap_or(value.len());
    Some(value[..end].to_string())
}

/// The authorization server's metadata: RFC 8414's path (the issuer's path after the
/// well-known segment), else OpenID Connect discovery.
async fn server_metadata(client: &reqwest::Client, issuer: &str) -> Option<ServerMetadata> {
    let url = Url::parse(issuer).ok()?;
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    let candidates = [
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ];
    for candidate in candidates {
        if let Some(found) = get_json::<ServerMetadata>(client, &candidate).await {
            return Some(found);
        }
    }
    None
}

async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: &str,
) -> Option<T> {
    let response = client.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = response.bytes().await.ok()?;
    let value: Value = serde_json::from_slice(&body).ok()?;
    serde_json::from_value(value).ok()
}
