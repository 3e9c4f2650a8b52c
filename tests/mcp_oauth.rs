//! `mcpServer/oauth/login` through the real binary against a local OAuth stub
//! (`tests/data/oauth_mcp_server.py`: an MCP server behind OAuth, its metadata, dynamic
//! registration, an authorize endpoint that redirects at once, a token endpoint checking PKCE).
//! The test plays the browser: it GETs the authorization URL the daemon answered and follows the
//! redirect to the daemon's loopback listener. Then the login is announced, the tokens are in a
//! 0600 file, a thread's MCP connection carries the access token — refreshed first when it has
//! expired — and no token or code reaches stdout, stderr (at trace level) or a rollout.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A failed unwrap fails the test.

mod support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::*;

/// The stub on a loopback port, with its log; killed when dropped.
struct OAuthStub {
    _child: tokio::process::Child,
    port: u16,
    log: PathBuf,
}

impl OAuthStub {
    async fn start(dir: &Path, first_expires_in: u64) -> OAuthStub {
        let port_file = dir.join("port");
        let log = dir.join("oauth.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/oauth_mcp_server.py");
        let child = tokio::process::Command::new("python3")
            .arg(script)
            .arg(&port_file)
            .arg(&log)
            .env("OAUTH_FIRST_EXPIRES_IN", first_expires_in.to_string())
            .kill_on_drop(true)
            .spawn()
            .expect("python3");
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.trim().parse::<u16>().ok())
            {
                return OAuthStub {
                    _child: child,
                    port,
                    log,
                };
            }
            assert!(Instant::now() < deadline, "the OAuth stub never listened");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Every token and code the stub issued.
    fn secrets(&self) -> Vec<String> {
        let tokens = self.log.with_extension("log.tokens");
        std::fs::read_to_string(tokens)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

async fn daemon_for(home: &Path, stub: &OAuthStub, provider: &MockProvider) -> Daemon {
    let mut overrides = mock_overrides(provider);
    overrides.push(format!(
        "mcp_servers.web.url=\"http://127.0.0.1:{}/mcp\"",
        stub.port
    ));
    let mut daemon = Daemon::spawn_with_env(
        home,
        &overrides,
        &[("OPENTURN_TEST_KEY", "sk-test"), ("RUST_LOG", "trace")],
    );
    daemon.initialize().await;
    daemon
}

/// The browser: opens the URL and follows the redirect to the daemon's listener.
async fn visit(url: &str) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let response = reqwest::get(url).await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    response.text().await.unwrap()
}

async fn completed_login(daemon: &mut Daemon) -> Value {
    daemon.notification("mcpServer/oauthLogin/completed").await["params"].clone()
}

async fn wait_ready(daemon: &mut Daemon, name: &str) {
    loop {
        let status = daemon.notification("mcpServer/startupStatus/updated").await;
        if status["params"]["name"] == name && status["params"]["status"] != "starting" {
            assert_eq!(status["params"]["status"], "ready", "{status}");
            return;
        }
    }
}

fn assert_no_secret_leaked(daemon: &Daemon, home: &Path, secrets: &[String]) {
    assert!(!secrets.is_empty());
    let stdout = serde_json::to_string(&daemon.transcript).unwrap();
    let stderr = daemon.stderr().join("\n");
    let rollouts: String = rollout_files(home)
        .iter()
        .map(|file| std::fs::read_to_string(file).unwrap_or_default())
        .collect();
    for secret in secrets {
        assert!(!stdout.contains(secret.as_str()), "a token reached stdout");
        assert!(!stderr.contains(secret.as_str()), "a token reached stderr");
        assert!(
            !rollouts.contains(secret.as_str()),
            "a token reached a rollout"
        );
    }
}

#[tokio::test]
async fn a_login_stores_private_tokens_that_reach_the_server_refreshed_once_expired() {
    let dir = tempfile::tempdir().unwrap();
    // The first access token is expired as soon as it is issued.
    let stub = OAuthStub::start(dir.path(), 0).await;
    let provider = provider(vec![text_reply(1, "done")]).await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = daemon_for(home.path(), &stub, &provider).await;

    let started = daemon
        .ok(
            "mcpServer/oauth/login",
            json!({"name": "web", "threadId": "t-1"}),
        )
        .await;
    let url = started["authorizationUrl"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("http://127.0.0.1:{}/auth/authorize?", stub.port)),
        "{url}"
    );
    assert!(url.contains("code_challenge_method=S256"), "{url}");
    let page = visit(url).await;
    assert!(page.contains("Login complete"), "{page}");
    let completed = completed_login(&mut daemon).await;
    assert_eq!(
        completed,
        json!({"name": "web", "threadId": "t-1", "loginId": started["loginId"],
               "success": true, "error": null})
    );
    let token_file = home.path().join("mcp_oauth/web.json");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    // A thread's connection finds the token expired, refreshes it, and uses the new one.
    let thread_id = daemon.start_thread(json!({})).await;
    wait_ready(&mut daemon, "web").await;
    text_turn(&mut daemon, &thread_id, "hello").await;
    let log = stub.log();
    assert!(log.contains("token request: authorization_code"), "{log}");
    assert!(log.contains("token request: refresh_token"), "{log}");
    assert!(log.contains("mcp initialize with access-2"), "{log}");
    assert!(log.contains("mcp tools/list with access-2"), "{log}");
    assert!(!log.contains("with access-1"), "{log}");
    let listed = daemon
        .ok("mcpServerStatus/list", json!({"threadId": thread_id}))
        .await;
    assert_eq!(listed["data"][0]["authStatus"], "oAuth");
    // The refreshed tokens were stored for the next connection.
    let stored = std::fs::read_to_string(&token_file).unwrap();
    let secrets = stub.secrets();
    assert!(stored.contains(secrets[secrets.len() - 2].as_str()));
    assert_no_secret_leaked(&daemon, home.path(), &secrets);
    daemon.exit_cleanly().await;
}

#[tokio::test]
async fn a_login_nobody_completes_times_out_and_bad_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stub = OAuthStub::start(dir.path(), 3600).await;
    let provider = provider(Vec::new()).await;
    let home = tempfile::tempdir().unwrap();
    let mut daemon = daemon_for(home.path(), &stub, &provider).await;

    let unknown = daemon
        .err("mcpServer/oauth/login", json!({"name": "nope"}))
        .await;
    assert_eq!(unknown["code"], -32600);
    assert_eq!(unknown["message"], "No MCP server named 'nope' found.");

    let started = daemon
        .ok(
            "mcpServer/oauth/login",
            json!({"name": "web", "timeoutSecs": 1}),
        )
        .await;
    let completed = completed_login(&mut daemon).await;
    assert_eq!(
        completed,
        json!({"name": "web", "threadId": null, "loginId": started["loginId"],
               "success": false, "error": "timed out waiting for OAuth callback"})
    );
    assert!(!home.path().join("mcp_oauth/web.json").exists());
    daemon.exit_cleanly().await;
}
