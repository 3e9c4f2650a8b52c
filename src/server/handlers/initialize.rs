//! `initialize`.

use crate::protocol::initialize::{InitializeParams, InitializeResponse, ServerInfo};
use crate::protocol::{PROTOCOL_VERSION, REFERENCE_VERSION};

use super::super::context::ServerContext;
use super::super::errors::HandlerError;

pub(crate) const SERVER_NAME: &str = "openturn";

pub(crate) fn initialize(
    context: &ServerContext,
    params: InitializeParams,
) -> Result<InitializeResponse, HandlerError> {
    {
        let mut connection = context.connection();
        connection.initialized = true;
        // The name travels upstream as the `originator` header: keep it a valid header value,
        // so one odd client name cannot make every turn fail.
        connection.client_name = header_safe(&params.client_info.name);
        connection.client_version = params.client_info.version.clone();
        connection.experimental_api = params
            .capabilities
            .as_ref()
            .is_some_and(|c| c.experimental_api);
    }
    if let Some(opt_outs) = params
        .capabilities
        .and_then(|c| c.opt_out_notification_methods)
    {
        context.outgoing.set_opt_outs(opt_outs);
    }
    // Initialized connections hear notifications from now on.
    context.hub.membership_changed();
    // Clients read the first x.y.z of `userAgent` as the protocol level they talk to: that is
    // the reference version openturn implements, not openturn's own release number.
    let version = REFERENCE_VERSION;
    let client = &params.client_info;
    let safe_name = header_safe(&client.name);
    let user_agent = format!(
        "{name}/{version} ({os}; {arch}) openturn ({name}; {client_version})",
        name = if safe_name.is_empty() {
            SERVER_NAME
        } else {
            &safe_name
        },
        os = std::env::consts::OS,
        arch = std::env::consts::ARCH,
        client_version = client.version,
    );
    Ok(InitializeResponse {
        user_agent,
        codex_home: context.config.home.display().to_string(),
        platform_family: if cfg!(windows) { "windows" } else { "unix" }.to_string(),
        platform_os: match std::env::consts::OS {
            "macos" => "macos",
            "windows" => "windows",
            _ => "linux",
        }
        .to_string(),
        protocol_version: PROTOCOL_VERSION.to_string(),
        server_info: ServerInfo {
            name: SERVER_NAME.to_string(),
            version: version.to_string(),
        },
        openturn_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Visible ASCII only (what an HTTP header value may carry), other characters as `_`, at most
/// 128 characters.
fn header_safe(name: &str) -> String {
    name.trim()
        .chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

// Configuration warnings follow the handshake's response.
handler!(Initialize, |context, params| {
    let warnings = super::config::config_warnings(&context.config.warnings)
        .into_iter()
        .map(super::reply::After::Notify)
        .collect();
    match initialize(context, params) {
        Ok(response) => super::reply::Reply::then(response, warnings),
        Err(error) => super::reply::Reply::plain(Err(error)),
    }
});

#[cfg(test)]
mod tests {
    use super::header_safe;

    #[test]
    fn client_names_become_valid_header_values() {
        assert_eq!(header_safe("my\teditor\n"), "my_editor");
        assert_eq!(header_safe("Zed ✓"), "Zed _");
        assert_eq!(header_safe("codex_python_sdk"), "codex_python_sdk");
    }
}
