//! `fuzzyFileSearch` and its sessions (`fuzzyFileSearch/sessionStart`, `sessionUpdate`,
//! `sessionStop`, experimental as on the reference). The walk and the ranking
//! ([`crate::core::file_search`]) run on blocking threads; a session's results follow its
//! update's response as `fuzzyFileSearch/sessionUpdated` then `fuzzyFileSearch/sessionCompleted`.
//! Every root must lie inside the client's roots ([`super::super::file_roots`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::core::file_search::{build_index, rank, FileMatch, WalkLimits};
use crate::core::TurnGate;
use crate::protocol::file_search::{
    FuzzyFileSearchMatchType, FuzzyFileSearchParams, FuzzyFileSearchResponse,
    FuzzyFileSearchResult, FuzzyFileSearchSessionCompletedNotification,
    FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStopParams,
    FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdatedNotification,
};
use crate::protocol::notification::ServerNotification;
use crate::protocol::turn::EmptyResponse;
use crate::sandbox::WritableArea;

use super::super::context::ServerContext;
use super::super::errors::HandlerError;
use super::super::file_roots::{absolute_param, client_roots};
use super::super::file_search::SearchSession;
use super::reply::{After, Reply};
use super::thread_read::blocking;

/// Each root absolute and inside the client's roots (links resolved), or an error naming it.
fn checked_roots(context: &ServerContext, roots: &[String]) -> Result<(), HandlerError> {
    let allowed = client_roots(context);
    let area = WritableArea::of_roots(&allowed);
    for root in roots {
        let path = absolute_param("roots", root)?;
        if area.check(&path).is_err() {
            return Err(HandlerError::InvalidRequest(format!(
                "`{root}` is outside the roots this client may search ({})",
                allowed
                    .iter()
                    .map(|root| root.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

fn to_result(found: FileMatch) -> FuzzyFileSearchResult {
    FuzzyFileSearchResult {
        root: found.root,
        path: found.relative,
        match_type: if found.is_directory {
            FuzzyFileSearchMatchType::Directory
        } else {
            FuzzyFileSearchMatchType::File
        },
        file_name: found.file_name,
        score: found.score,
        indices: Some(found.indices),
    }
}

fn require_experimental(context: &ServerContext, method: &str) -> Result<(), HandlerError> {
    if context.connection().experimental_api {
        Ok(())
    } else {
        Err(HandlerError::InvalidRequest(format!(
            "{method} requires experimentalApi capability"
        )))
    }
}

async fn fuzzy_file_search(
    context: &ServerContext,
    params: FuzzyFileSearchParams,
) -> Result<FuzzyFileSearchResponse, HandlerError> {
    checked_roots(context, &params.roots)?;
    if params.query.trim().is_empty() {
        return Ok(FuzzyFileSearchResponse { files: Vec::new() });
    }
    let token = params.cancellation_token.clone();
    let cancel = context.file_searches.begin(token.as_deref());
    let work_cancel = cancel.clone();
    let FuzzyFileSearchParams { query, roots, .. } = params;
    let ranked = blocking(move || {
        let index = build_index(&roots, WalkLimits::default(), &work_cancel);
        rank(&index, &query, &work_cancel)
    })
    .await;
    context.file_searches.finish(token.as_deref(), &cancel);
    // A search cancelled by a newer one answers no files rather than partial ones.
    let files = match ranked? {
        Some(found) if !cancel.load(Ordering::SeqCst) => found.into_iter().map(to_result).collect(),
        _ => Vec::new(),
    };
    Ok(FuzzyFileSearchResponse { files })
}

fn session_start(
    context: &ServerContext,
    params: FuzzyFileSearchSessionStartParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental(context, "fuzzyFileSearch/sessionStart")?;
    if params.roots.is_empty() {
        return Err(HandlerError::InvalidParams(
            "`roots` must name at least one directory to search".to_string(),
        ));
    }
    checked_roots(context, &params.roots)?;
    context
        .file_searches
        .start_session(&params.session_id, params.roots);
    Ok(EmptyResponse {})
}

fn session_update(
    context: &Arc<ServerContext>,
    params: FuzzyFileSearchSessionUpdateParams,
) -> Reply<EmptyResponse> {
    if let Err(error) = require_experimental(context, "fuzzyFileSearch/sessionUpdate") {
        return Reply::plain(Err(error));
    }
    let Some(session) = context.file_searches.session(&params.session_id) else {
        return Reply::plain(Err(HandlerError::InvalidRequest(format!(
            "fuzzy file search session not found: {}",
            params.session_id
        ))));
    };
    let generation = session.next_generation();
    // The results wait for the response to be out: the gate opens after it is sent.
    let (gate_tx, gate_rx) = tokio::sync::oneshot::channel();
    let context = context.clone();
    tokio::spawn(async move {
        if gate_rx.await.is_err() {
            return;
        }
        send_session_results(&context, &session, generation, params).await;
    });
    Reply::then(EmptyResponse {}, vec![After::OpenGate(TurnGate(gate_tx))])
}

/// Ranks the session's index for one update and sends its notifications, unless a newer update
/// or the session's end overtook it.
async fn send_session_results(
    context: &ServerContext,
    session: &SearchSession,
    generation: u64,
    params: FuzzyFileSearchSessionUpdateParams,
) {
    let _serial = session.serial.lock().await;
    if !session.is_current(generation) {
        return;
    }
    let Some(index) = session.index().await else {
        return;
    };
    let cancel = session.cancel.clone();
    let query = params.query.clone();
    let Ok(Some(found)) = blocking(move || rank(&index, &query, &cancel)).await else {
        return;
    };
    if !session.is_current(generation) {
        return;
    }
    let updated = ServerNotification::FuzzyFileSearchSessionUpdated(
        FuzzyFileSearchSessionUpdatedNotification {
            session_id: params.session_id.clone(),
            query: params.query,
            files: found.into_iter().map(to_result).collect(),
        },
    );
    let completed = ServerNotification::FuzzyFileSearchSessionCompleted(
        FuzzyFileSearchSessionCompletedNotification {
            session_id: params.session_id,
        },
    );
    for notification in [updated, completed] {
        if context
            .outgoing
            .send_notification(&notification)
            .await
            .is_err()
        {
            return;
        }
    }
}

fn session_stop(
    context: &ServerContext,
    params: FuzzyFileSearchSessionStopParams,
) -> Result<EmptyResponse, HandlerError> {
    require_experimental(context, "fuzzyFileSearch/sessionStop")?;
    context.file_searches.stop_session(&params.session_id);
    Ok(EmptyResponse {})
}

handler!(FuzzyFileSearch, |context, params| fuzzy_file_search(
    context, params
)
.await);
handler!(
    FuzzyFileSearchSessionStart,
    |context, params| session_start(context, params)
);
handler!(FuzzyFileSearchSessionUpdate, |context, params| {
    session_update(context, params)
});
handler!(FuzzyFileSearchSessionStop, |context, params| session_stop(
    context, params
));
