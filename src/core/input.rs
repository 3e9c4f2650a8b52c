//! User input → the user message the model sees. Text goes as `input_text`, image URLs as
//! `input_image`; a local image is read from disk here, checked, and inlined as a `data:` URL
//! between `<image name=[Image #N] path="…">` / `</image>` texts, as the reference sends it.
//!
//! A `skill` item sends the skill's `SKILL.md`, read here, as its own user message after the
//! user's words (`<skill>`, its name and path, the file, `</skill>`: the reference's framing);
//! a `mention` names a file the text refers to and adds nothing for the model (the reference
//! sends none either), but is kept on the user-message item.
//!
//! Preparing happens before a turn starts or input is steered in: a missing, unreadable,
//! oversized or non-image file fails the request that brought it, so nothing of that input is
//! announced, stored or sent. (The reference instead sends the model a note that the image
//! could not be read; a client is better served by an error it can show next to its input.)

use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::wire::item::ContentItem;
use crate::wire::ResponseItem;

use super::items::UserInput;

/// The largest local image sent. Providers refuse bigger images (OpenAI's limit is 20 MB per
/// image), and the image is replayed with every later request of the thread, so a bigger one
/// would fail the thread's turns from here on rather than just this one.
pub const MAX_LOCAL_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// The detail level asked for when the input names none (what the reference asks for).
const DEFAULT_IMAGE_DETAIL: &str = "high";

/// The largest `SKILL.md` sent: a skill is instructions, and it is replayed with every later
/// request of the thread.
pub const MAX_SKILL_FILE_BYTES: u64 = 256 * 1024;

/// Why a file the input names (a local image, a skill's `SKILL.md`) cannot be sent. Named for
/// the first kind of file it covered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalImageError {
    #[error("could not read the local image at `{path}`: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("the local image at `{path}` is larger than the {limit} bytes an image may have")]
    TooLarge { path: String, limit: u64 },
    #[error("the local image at `{path}` is not a PNG, JPEG, GIF or WebP image")]
    Unsupported { path: String },
    #[error("could not read the skill file at `{path}`: {reason}")]
    SkillUnreadable { path: String, reason: String },
}

impl LocalImageError {
    /// A machine-readable name of the problem, for error `data`.
    pub fn reason(&self) -> &'static str {
        match self {
            LocalImageError::Unreadable { .. } => "local_image_unreadable",
            LocalImageError::TooLarge { .. } => "local_image_too_large",
            LocalImageError::Unsupported { .. } => "local_image_unsupported",
            LocalImageError::SkillUnreadable { .. } => "skill_unreadable",
        }
    }

    /// The path as the input gave it.
    pub fn path(&self) -> &str {
        match self {
            LocalImageError::Unreadable { path, .. }
            | LocalImageError::TooLarge { path, .. }
            | LocalImageError::Unsupported { path }
            | LocalImageError::SkillUnreadable { path, .. } => path,
        }
    }
}

/// User input ready to join a turn: what the client sent (for the user-message item) and the
/// messages the model gets (the user's, then one per skill).
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedInput {
    pub input: Vec<UserInput>,
    pub(crate) messages: Vec<ResponseItem>,
}

impl PreparedInput {
    /// Reads every local image of `input` (relative paths against `cwd`) and builds the model's
    /// message. The reads run on the blocking pool: a large file must not stall the runtime.
    pub async fn prepare(
        input: Vec<UserInput>,
        cwd: &Path,
    ) -> Result<PreparedInput, LocalImageError> {
        let cwd = cwd.to_path_buf();
        let task = tokio::task::spawn_blocking(move || {
            let mut messages = vec![user_message(&input, &cwd)?];
            messages.extend(skill_messages(&input, &cwd)?);
            Ok(PreparedInput { input, messages })
        });
        match task.await {
            Ok(prepared) => prepared,
            Err(error) => Err(LocalImageError::Unreadable {
                path: String::new(),
                reason: format!("the reading task failed: {error}"),
            }),
        }
    }

    /// One text message, as the server's own prompts (a review's) are sent.
    pub(crate) fn text(text: String) -> PreparedInput {
        let message = ResponseItem::user_text(&text);
        PreparedInput {
            input: vec![UserInput::Text { text }],
            messages: vec![message],
        }
    }

    /// Input that needs no file: text and image URLs only (local images become a note).
    #[cfg(test)]
    pub(crate) fn without_files(input: Vec<UserInput>) -> PreparedInput {
        let message = user_message(&input, Path::new("/"))
            .unwrap_or_else(|error| ResponseItem::user_text(error.to_string()));
        PreparedInput {
            input,
            messages: vec![message],
        }
    }
}

/// The user message for `input`, reading local images from disk.
fn user_message(input: &[UserInput], cwd: &Path) -> Result<ResponseItem, LocalImageError> {
    let mut content = Vec::with_capacity(input.len());
    let mut image_number = 0;
    for part in input {
        match part {
            UserInput::Text { text } => content.push(ContentItem::InputText { text: text.clone() }),
            UserInput::Image { url, detail } => content.push(ContentItem::InputImage {
                image_url: url.clone(),
                detail: detail.clone(),
            }),
            UserInput::LocalImage { path, detail } => {
                image_number += 1;
                let image_url = data_url(path, cwd)?;
                content.push(ContentItem::InputText {
                    text: format!("<image name=[Image #{image_number}] path=\"{path}\">"),
                });
                content.push(ContentItem::InputImage {
                    image_url,
                    detail: Some(
                        detail
                            .as_deref()
                            .unwrap_or(DEFAULT_IMAGE_DETAIL)
                            .to_string(),
                    ),
                });
                content.push(ContentItem::InputText {
                    text: "</image>".to_string(),
                });
            }
            // Sent as messages of their own (`skill_messages`), or not at all.
            UserInput::Skill { .. } | UserInput::Mention { .. } => {}
        }
    }
    Ok(ResponseItem::Message {
        id: None,
        role: "user".to_string(),
        content,
        phase: None,
    })
}

/// One user message per `skill` item: the skill's `SKILL.md` as it is on disk, framed with its
/// name and path.
fn skill_messages(input: &[UserInput], cwd: &Path) -> Result<Vec<ResponseItem>, LocalImageError> {
    let mut messages = Vec::new();
    for part in input {
        let UserInput::Skill { name, path } = part else {
            continue;
        };
        let unreadable = |reason: String| LocalImageError::SkillUnreadable {
            path: path.clone(),
            reason,
        };
        let bytes = read_capped(&resolve(path, cwd), MAX_SKILL_FILE_BYTES).map_err(|error| {
            unreadable(match error {
                ReadError::TooLarge => format!("it is larger than {MAX_SKILL_FILE_BYTES} bytes"),
                ReadError::Io(error) => error.to_string(),
            })
        })?;
        let text =
            String::from_utf8(bytes).map_err(|_| unreadable("it is not UTF-8 text".into()))?;
        messages.push(ResponseItem::user_text(format!(
            "<skill>\n<name>{name}</name>\n<path>{path}</path>\n{text}\n</skill>"
        )));
    }
    Ok(messages)
}

/// The file at `path` as a `data:` URL, its type read from its content (an extension can lie,
/// and the provider checks the bytes).
fn data_url(path: &str, cwd: &Path) -> Result<String, LocalImageError> {
    let bytes =
        read_capped(&resolve(path, cwd), MAX_LOCAL_IMAGE_BYTES).map_err(|error| match error {
            ReadError::TooLarge => LocalImageError::TooLarge {
                path: path.to_string(),
                limit: MAX_LOCAL_IMAGE_BYTES,
            },
            ReadError::Io(error) => LocalImageError::Unreadable {
                path: path.to_string(),
                reason: error.to_string(),
            },
        })?;
    let mime = sniff_image_type(&bytes).ok_or_else(|| LocalImageError::Unsupported {
        path: path.to_string(),
    })?;
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(format!("data:{mime};base64,{encoded}"))
}

fn resolve(path: &str, cwd: &Path) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

enum ReadError {
    TooLarge,
    Io(std::io::Error),
}

/// Reads at most `limit` bytes; a file with more (even one still growing) is too large. The
/// read itself is bounded, so a huge or endless file (a FIFO, `/dev/zero`) costs no more memory.
fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(ReadError::Io)?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge);
    }
    Ok(bytes)
}

/// The MIME type of the image formats providers accept, from their magic bytes.
fn sniff_image_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && bytes.starts_with(b"RIFF") && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_types_are_read_from_the_content() {
        assert_eq!(
            sniff_image_type(b"\x89PNG\r\n\x1a\nrest"),
            Some("image/png")
        );
        assert_eq!(
            sniff_image_type(&[0xFF, 0xD8, 0xFF, 0xE0]),
            Some("image/jpeg")
        );
        assert_eq!(sniff_image_type(b"GIF89a..."), Some("image/gif"));
        assert_eq!(
            sniff_image_type(b"RIFF\0\0\0\0WEBPVP8 "),
            Some("image/webp")
        );
        assert_eq!(sniff_image_type(b"RIFF\0\0\0\0WAVE"), None);
        assert_eq!(sniff_image_type(b"hello"), None);
        assert_eq!(sniff_image_type(b""), None);
    }

    #[test]
    fn a_read_stops_past_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.png");
        std::fs::write(&path, vec![0u8; 11]).unwrap();
        assert!(matches!(read_capped(&path, 10), Err(ReadError::TooLarge)));
        assert!(matches!(read_capped(&path, 11), Ok(bytes) if bytes.len() == 11));
        assert!(matches!(
            read_capped(Path::new("/dev/zero"), 1024),
            Err(ReadError::TooLarge)
        ));
    }
}
