//! Who may open a WebSocket connection: no check (loopback or a private Unix socket only), a
//! capability token (the SHA-256 of a secret the client presents), or an HS256-signed bearer
//! token with its issuer, audience and expiry checked. The token travels in
//! `Authorization: Bearer …` on the upgrade request; it is compared in constant time and never
//! logged or echoed.

use std::path::{Path, PathBuf};

use ring::digest::{digest, SHA256};

/// How to build the check, as the command line gives it.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WsAuthArgs {
    /// Authentication mode for incoming WebSocket connections.
    #[arg(long = "ws-auth", value_name = "MODE", value_parser = ["capability-token", "signed-bearer-token"])]
    pub mode: Option<String>,
    /// Absolute path to the capability-token file.
    #[arg(long = "ws-token-file", value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Hex-encoded SHA-256 digest of the capability token.
    #[arg(long = "ws-token-sha256", value_name = "HEX")]
    pub token_sha256: Option<String>,
    /// Absolute path to the shared secret file for signed JWT bearer tokens.
    #[arg(long = "ws-shared-secret-file", value_name = "PATH")]
    pub shared_secret_file: Option<PathBuf>,
    /// Expected issuer for signed JWT bearer tokens.
    #[arg(long = "ws-issuer", value_name = "ISSUER")]
    pub issuer: Option<String>,
    /// Expected audience for signed JWT bearer tokens.
    #[arg(long = "ws-audience", value_name = "AUDIENCE")]
    pub audience: Option<String>,
    /// Maximum clock skew when validating signed JWT bearer tokens.
    #[arg(long = "ws-max-clock-skew-seconds", value_name = "SECONDS")]
    pub max_clock_skew_seconds: Option<u64>,
}

/// The configured check.
#[derive(Clone)]
pub enum WsAuth {
    None,
    /// The SHA-256 digest of the token.
    Capability([u8; 32]),
    Signed {
        secret: Vec<u8>,
        issuer: Option<String>,
        audience: Option<String>,
        skew_seconds: u64,
    },
}

/// Why the listener's authentication could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum AuthSetupError {
    #[error("--ws-auth capability-token needs --ws-token-file or --ws-token-sha256")]
    MissingToken,
    #[error("--ws-auth signed-bearer-token needs --ws-shared-secret-file")]
    MissingSecret,
    #[error("{flag} must be an absolute path")]
    RelativePath { flag: &'static str },
    #[error("cannot read {flag} {path}: {source}")]
    Read {
        flag: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{flag} is empty")]
    Empty { flag: &'static str },
    #[error("--ws-token-sha256 must be 64 hexadecimal digits")]
    BadDigest,
    #[error("--ws-{0} is given without --ws-auth")]
    WithoutMode(&'static str),
}

/// Why a connection was refused; the message is what the client reads (it never carries the
/// token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    #[error("missing websocket bearer token")]
    Missing,
    #[error("invalid websocket bearer token")]
    Invalid,
}

impl WsAuth {
    pub fn from_args(args: &WsAuthArgs) -> Result<WsAuth, AuthSetupError> {
        match args.mode.as_deref() {
            None => {
                let given = [
                    ("token-file", args.token_file.is_some()),
                    ("token-sha256", args.token_sha256.is_some()),
                    ("shared-secret-file", args.shared_secret_file.is_some()),
                ];
                match given.iter().find(|(_, set)| *set) {
                    Some((flag, _)) => Err(AuthSetupError::WithoutMode(flag)),
                    None => Ok(WsAuth::None),
                }
            }
            Some("capability-token") => {
                if let Some(hex) = &args.token_sha256 {
                    return parse_digest(hex).map(WsAuth::Capability);
                }
                let path = args
                    .token_file
                    .as_ref()
                    .ok_or(AuthSetupError::MissingToken)?;
                let token = read_secret(path, "--ws-token-file")?;
                Ok(WsAuth::Capability(sha256(&token)))
            }
            Some(_) => {
                let path = args
                    .shared_secret_file
                    .as_ref()
                    .ok_or(AuthSetupError::MissingSecret)?;
                Ok(WsAuth::Signed {
                    secret: read_secret(path, "--ws-shared-secret-file")?,
                    issuer: args.issuer.clone(),
                    audience: args.audience.clone(),
                    skew_seconds: args.max_clock_skew_seconds.unwrap_or(30),
                })
            }
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, WsAuth::None)
    }

    /// Checks the upgrade request's `Authorization` header value, if any.
    pub fn check(&self, authorization: Option<&str>) -> Result<(), AuthFailure> {
        if self.is_none() {
            return Ok(());
        }
        let token = authorization
            .and_then(|value| {
                let (scheme, token) = value.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|token| !token.is_empty())
            .ok_or(AuthFailure::Missing)?;
        match self {
            WsAuth::None => Ok(()),
            WsAuth::Capability(expected) => {
                // Digests of equal length, compared without an early exit: the time taken says
                // nothing about how much of the token was right.
                let presented = sha256(token.as_bytes());
                let difference = presented
                    .iter()
                    .zip(expected.iter())
                    .fold(0u8, |acc, (a, b)| acc | (a ^ b));
                if difference == 0 {
                    Ok(())
                } else {
                    Err(AuthFailure::Invalid)
                }
            }
            WsAuth::Signed {
                secret,
                issuer,
                audience,
                skew_seconds,
            } => check_signed(token, secret, issuer, audience, *skew_seconds),
        }
    }
}

fn check_signed(
    token: &str,
    secret: &[u8],
    issuer: &Option<String>,
    audience: &Option<String>,
    skew_seconds: u64,
) -> Result<(), AuthFailure> {
    use jsonwebtoken::{decode, Algorithm, DecodingKey, Validation};
    let mut validation = Validation::new(Algorithm::HS256);
    validation.leeway = skew_seconds;
    validation.set_required_spec_claims(&["exp"]);
    validation.validate_nbf = true;
    match issuer {
        Some(issuer) => validation.set_issuer(&[issuer]),
        None => validation.iss = None,
    }
    match audience {
        Some(audience) => validation.set_audience(&[audience]),
        None => validation.validate_aud = false,
    }
    decode::<serde_json::Value>(token, &DecodingKey::from_secret(secret), &validation)
        .map(|_| ())
        .map_err(|error| {
            // The kind only (expired, bad signature, wrong audience): never the token.
            tracing::info!(kind = ?error.kind(), "websocket bearer token refused");
            AuthFailure::Invalid
        })
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(digest(&SHA256, bytes).as_ref());
    out
}

fn parse_digest(hex: &str) -> Result<[u8; 32], AuthSetupError> {
    let hex = hex.trim();
    if hex.len() != 64 {
        return Err(AuthSetupError::BadDigest);
    }
    let mut out = [0u8; 32];
    for (index, byte) in out.iter_mut().enumerate() {
        let pair = hex
            .get(index * 2..index * 2 + 2)
            .ok_or(AuthSetupError::BadDigest)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| AuthSetupError::BadDigest)?;
    }
    Ok(out)
}

/// A secret file's contents, without the trailing newline an editor leaves.
fn read_secret(path: &Path, flag: &'static str) -> Result<Vec<u8>, AuthSetupError> {
    if !path.is_absolute() {
        return Err(AuthSetupError::RelativePath { flag });
    }
    let mut bytes = std::fs::read(path).map_err(|source| AuthSetupError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    })?;
    while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        bytes.pop();
    }
    if bytes.is_empty() {
        return Err(AuthSetupError::Empty { flag });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capability_token_is_checked_against_its_digest() {
        let auth = WsAuth::Capability(sha256(b"secret"));
        assert_eq!(auth.check(None), Err(AuthFailure::Missing));
        assert_eq!(auth.check(Some("Basic secret")), Err(AuthFailure::Missing));
        assert_eq!(auth.check(Some("Bearer wrong")), Err(AuthFailure::Invalid));
        assert_eq!(auth.check(Some("Bearer secret")), Ok(()));
        let hex: String = sha256(b"secret")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert!(matches!(parse_digest(&hex), Ok(d) if d == sha256(b"secret")));
    }

    #[test]
    fn a_signed_token_needs_the_secret_issuer_audience_and_a_future_expiry() {
        use jsonwebtoken::{encode, EncodingKey, Header};
        let auth = WsAuth::Signed {
            secret: b"shh".to_vec(),
            issuer: Some("me".into()),
            audience: Some("daemon".into()),
            skew_seconds: 0,
        };
        let now = chrono::Utc::now().timestamp();
        let token = |secret: &[u8], iss: &str, aud: &str, exp: i64| {
            let claims = serde_json::json!({"iss": iss, "aud": aud, "exp": exp});
            encode(
                &Header::default(),
                &claims,
                &EncodingKey::from_secret(secret),
            )
            .unwrap()
        };
        let bearer = |t: String| format!("Bearer {t}");
        let good = token(b"shh", "me", "daemon", now + 60);
        assert_eq!(auth.check(Some(&bearer(good))), Ok(()));
        for bad in [
            token(b"other", "me", "daemon", now + 60),
            token(b"shh", "you", "daemon", now + 60),
            token(b"shh", "me", "else", now + 60),
            token(b"shh", "me", "daemon", now - 60),
        ] {
            assert_eq!(auth.check(Some(&bearer(bad))), Err(AuthFailure::Invalid));
        }
    }
}
