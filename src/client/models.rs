//! Asking a provider which models it serves: `GET {base_url}/models`, answered OpenAI-style
//! (`{"data": [{"id": "…"}, …]}`), with the same auth and headers as a request. Local servers
//! (llama.cpp, vLLM, Ollama's OpenAI endpoint, LM Studio) answer it, so their models can be
//! picked without configuring each one.
//!
//! The whole exchange is bounded by [`MODEL_LIST_TIMEOUT`] and the body by
//! [`MAX_MODEL_LIST_BYTES`]: a picker must never wait long on a provider, nor let one make the
//! daemon buffer without limit. No retries: the caller falls back to what it knows.

use std::time::Duration;

use serde::Deserialize;

use super::error::{error_chain, ClientError};
use super::headers::{request_headers, Accept, HeaderInputs, TurnState};
use super::provider::ProviderInfo;
use super::transport::ModelClient;

/// How long the whole exchange may take.
pub const MODEL_LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// The most bytes of a model list that are read; lists of thousands of models stay far below.
const MAX_MODEL_LIST_BYTES: usize = 4 * 1024 * 1024;

#[derive(Deserialize)]
struct ModelListBody {
    data: Vec<ModelListEntry>,
}

#[derive(Deserialize)]
struct ModelListEntry {
    id: Option<String>,
}

impl ModelClient {
    /// The ids the provider lists, in its order (entries without an id skipped).
    pub async fn list_model_ids(
        &self,
        provider: &ProviderInfo,
    ) -> Result<Vec<String>, ClientError> {
        let url = provider.models_url();
        let listing = async {
            let inputs = HeaderInputs {
                thread_id: "",
                originator: "",
                turn_state: &TurnState::default(),
                accept: Accept::Any,
            };
            let headers = request_headers(provider, &inputs)?;
            let response = self
                .http()
                .get(&url)
                .query(&provider.query_params)
                .headers(headers)
                .send()
                .await
                // The URL is named without its query, which may carry a key.
                .map_err(|error| {
                    ClientError::connect(provider, &url, error_chain(&error.without_url()))
                })?;
            let status = response.status().as_u16();
            let body = bounded_body(response).await;
            if !(200..300).contains(&status) {
                let text = String::from_utf8_lossy(&body);
                return Err(ClientError::from_status(provider, status, &text, None));
            }
            let parsed: ModelListBody =
                serde_json::from_slice(&body).map_err(|error| ClientError::Config {
                    provider: provider.display_name().to_string(),
                    message: format!("{url} did not answer with a model list: {error}"),
                })?;
            Ok(parsed
                .data
                .into_iter()
                .filter_map(|entry| entry.id)
                .collect())
        };
        tokio::time::timeout(MODEL_LIST_TIMEOUT, listing)
            .await
            .unwrap_or_else(|_elapsed| {
                Err(ClientError::connect(
                    provider,
                    &url,
                    format!("no model list within {} s", MODEL_LIST_TIMEOUT.as_secs()),
                ))
            })
    }
}

/// At most [`MAX_MODEL_LIST_BYTES`] of the body; a body cut by the limit fails to parse.
async fn bounded_body(mut response: reqwest::Response) -> Vec<u8> {
    let mut body = Vec::new();
    // Bounded: each iteration reads one chunk, and it stops past the limit.
    while body.len() <= MAX_MODEL_LIST_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    body
}
