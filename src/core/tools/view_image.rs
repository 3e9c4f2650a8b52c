//! `view_image {path}`: the model looks at an image file. The file (absolute, or relative to the
//! thread's cwd) is read and checked on the blocking pool, shrunk to fit [`MAX_SIDE`] when it is
//! larger, and answered as an `input_image` data URL inside the call's output, so the next
//! request shows the model the picture. The client sees an `imageView` item; a file that is
//! missing, too large or not an image is a plain-text error for the model and no item.
//!
//! What the tool may read is what the thread's commands may read: every sandbox mode lets a
//! command read any file (docs/SANDBOX.md), so no path is refused for where it is, only for
//! what it holds.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use base64::Engine;
use image::{ImageFormat, ImageReader};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::wire::ContentItem;

use super::super::ids::ItemId;
use super::super::items::TurnItem;
use super::handle::TurnHandle;
use super::output::ToolOutput;

pub(crate) const TOOL_NAME: &str = "view_image";

/// The longest side an image is sent with; a larger one is scaled down to it (what the
/// provider would do anyway, without sending the extra bytes).
pub(crate) const MAX_SIDE: u32 = 2048;

/// Files larger than this are refused before decoding.
const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

pub(crate) fn spec() -> Value {
    json!({
        "type": "function",
        "name": TOOL_NAME,
        "description": "Look at an image file on disk (PNG, JPEG, GIF or WebP) when you need to see it.",
        "strict": false,
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The image's path: absolute, or relative to the working directory."}
            },
            "required": ["path"],
            "additionalProperties": false
        }
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct ViewImageArgs {
    pub path: String,
}

/// Why an image could not be shown; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ViewImageError {
    #[error("cannot read `{path}`: {source}")]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` is larger than {MAX_FILE_BYTES} bytes")]
    TooLarge { path: String },
    #[error("`{path}` is not an image this tool reads (PNG, JPEG, GIF or WebP)")]
    NotAnImage { path: String },
    #[error("`{path}` could not be decoded as an image: {reason}")]
    Corrupt { path: String, reason: String },
}

/// Reads the image and answers with it; a failure is the model's to read.
pub(crate) async fn run(turn: &TurnHandle, call_id: ItemId, args: ViewImageArgs) -> ToolOutput {
    let path = resolve(&args.path, &turn.env.settings().cwd);
    let shown = path.display().to_string();
    let loaded = tokio::task::spawn_blocking(move || data_url(&path)).await;
    let text = match loaded {
        Ok(Ok(url)) => {
            let item = TurnItem::ImageView {
                id: call_id.clone(),
                path: shown,
            };
            turn.item_started(item.clone()).await;
            turn.item_completed(item).await;
            turn.answer_with_content(
                &call_id,
                vec![ContentItem::InputImage {
                    image_url: url,
                    detail: Some("high".to_string()),
                }],
            );
            String::new()
        }
        Ok(Err(error)) => error.to_string(),
        Err(error) => format!("reading the image failed: {error}"),
    };
    ToolOutput {
        call_id,
        custom: false,
        text,
    }
}

fn resolve(path: &str, cwd: &Path) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    }
}

/// The image at `path` as a `data:` URL: its own bytes when it fits, else scaled down and
/// re-encoded as PNG. Blocking: call it off the async threads.
pub(crate) fn data_url(path: &Path) -> Result<String, ViewImageError> {
    let shown = path.display().to_string();
    let unreadable = |source| ViewImageError::Unreadable {
        path: shown.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(ViewImageError::TooLarge { path: shown });
    }
    let not_an_image = || ViewImageError::NotAnImage {
        path: shown.clone(),
    };
    let format = image::guess_format(&bytes).map_err(|_| not_an_image())?;
    let mime = match format {
        ImageFormat::Png => "image/png",
        ImageFormat::Jpeg => "image/jpeg",
        ImageFormat::Gif => "image/gif",
        ImageFormat::WebP => "image/webp",
        _ => return Err(not_an_image()),
    };
    let corrupt = |error: image::ImageError| ViewImageError::Corrupt {
        path: shown.clone(),
        reason: error.to_string(),
    };
    // Decoding the whole picture also proves it is one (a header alone can lie).
    let decoded = ImageReader::with_format(Cursor::new(&bytes), format)
        .decode()
        .map_err(corrupt)?;
    let (encoded, mime) = if decoded.width() <= MAX_SIDE && decoded.height() <= MAX_SIDE {
        (bytes, mime)
    } else {
        let smaller = decoded.resize(MAX_SIDE, MAX_SIDE, image::imageops::FilterType::Triangle);
        let mut png = Cursor::new(Vec::new());
        smaller
            .write_to(&mut png, ImageFormat::Png)
            .map_err(corrupt)?;
        (png.into_inner(), "image/png")
    };
    let base64 = base64::engine::general_purpose::STANDARD.encode(&encoded);
    Ok(format!("data:{mime};base64,{base64}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture = image::RgbImage::from_pixel(width, height, image::Rgb([200, 10, 10]));
        let mut out = Cursor::new(Vec::new());
        picture.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    fn decoded_size(url: &str) -> (u32, u32) {
        let data = url.split_once(',').unwrap().1;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        let picture = image::load_from_memory(&bytes).unwrap();
        (picture.width(), picture.height())
    }

    #[test]
    fn small_images_go_as_they_are_and_large_ones_are_scaled_to_fit() {
        let dir = tempfile::tempdir().unwrap();
        let small = dir.path().join("small.png");
        std::fs::write(&small, png(4, 3)).unwrap();
        let url = data_url(&small).unwrap();
        assert!(url.starts_with("data:image/png;base64,"));
        assert_eq!(decoded_size(&url), (4, 3));
        let wide = dir.path().join("wide.png");
        std::fs::write(&wide, png(3000, 1000)).unwrap();
        assert_eq!(decoded_size(&data_url(&wide).unwrap()), (2048, 683));
    }

    #[test]
    fn missing_text_and_broken_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let missing = data_url(&dir.path().join("nope.png")).unwrap_err();
        assert!(
            matches!(missing, ViewImageError::Unreadable { .. }),
            "{missing}"
        );
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "hello").unwrap();
        assert!(matches!(
            data_url(&text).unwrap_err(),
            ViewImageError::NotAnImage { .. }
        ));
        let broken = dir.path().join("broken.png");
        let mut bytes = png(50, 50);
        bytes.truncate(40);
        std::fs::write(&broken, bytes).unwrap();
        assert!(matches!(
            data_url(&broken).unwrap_err(),
            ViewImageError::Corrupt { .. }
        ));
    }
}
