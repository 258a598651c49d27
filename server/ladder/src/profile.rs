//! A bot's profile as its owner writes it: a photo and a bio, checked here
//! before anything is stored.
//!
//! A photo is never stored as uploaded. [`Photo::from_upload`] reads its
//! header, refuses anything that is not a PNG, JPEG or WebP within
//! [`MAX_PHOTO_BYTES`] and [`MAX_PHOTO_SIDE`] pixels a side (before any
//! pixel is decoded, so a small file declaring a huge image costs nothing),
//! decodes it under an allocation cap, and re-encodes the centre square as a
//! PNG of at most [`THUMBNAIL_SIDE`] pixels a side: text chunks, EXIF, ICC
//! profiles and anything else the upload carried are gone.

use std::io::Cursor;
use std::time::Duration;

use image::imageops::FilterType;
use image::{ImageFormat, ImageReader, Limits};

use crate::bots::{self, Bot};
use crate::core::Core;
use crate::error::{Error, Result};

/// The largest photo upload, in bytes.
pub const MAX_PHOTO_BYTES: usize = 512 * 1024;
/// The widest and tallest photo accepted, in pixels.
pub const MAX_PHOTO_SIDE: u32 = 4096;
/// The side of the stored thumbnail, in pixels (smaller photos keep their
/// own shorter side).
pub const THUMBNAIL_SIDE: u32 = 256;
/// The longest bio, in characters.
pub const MAX_BIO_CHARS: usize = 500;
/// The content type of every stored photo.
pub const PHOTO_CONTENT_TYPE: &str = "image/png";

/// Why a photo or bio was refused; each message says what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The upload is over [`MAX_PHOTO_BYTES`].
    #[error("the photo is {0} bytes; at most {MAX_PHOTO_BYTES} (512 KiB) are accepted")]
    PhotoTooLarge(usize),
    /// Not a PNG, JPEG or WebP file.
    #[error("the photo is not a PNG, JPEG or WebP image")]
    NotAnImage,
    /// Its header declares more pixels than accepted.
    #[error("the photo declares {width} × {height} pixels; at most {MAX_PHOTO_SIDE} × {MAX_PHOTO_SIDE} are accepted")]
    PhotoTooBig {
        /// Declared width.
        width: u32,
        /// Declared height.
        height: u32,
    },
    /// A header or pixel data that does not decode.
    #[error("the photo cannot be decoded: {0}")]
    Undecodable(String),
    /// The bio is over [`MAX_BIO_CHARS`].
    #[error("the bio is {0} characters; at most {MAX_BIO_CHARS} are accepted")]
    BioTooLong(usize),
    /// The bio holds control characters other than newlines and tabs.
    #[error("the bio holds control characters; write plain text")]
    BioControl,
}

/// A photo ready to store and serve: a square PNG thumbnail.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Photo {
    /// The PNG bytes.
    pub png: Vec<u8>,
    /// Its side, in pixels.
    pub side: u32,
}

impl Photo {
    /// Checks an uploaded photo and makes its thumbnail.
    ///
    /// # Errors
    ///
    /// A [`ProfileError`] saying what is wrong with the upload.
    pub fn from_upload(bytes: &[u8]) -> Result<Photo, ProfileError> {
        if bytes.len() > MAX_PHOTO_BYTES {
            return Err(ProfileError::PhotoTooLarge(bytes.len()));
        }
        let format = image::guess_format(bytes).map_err(|_| ProfileError::NotAnImage)?;
        if !matches!(format, ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP) {
            return Err(ProfileError::NotAnImage);
        }
        // The header alone first: a declared size over the limit is refused
        // before any pixel is decoded.
        let (width, height) = {
            let mut probe = ImageReader::with_format(Cursor::new(bytes), format);
            probe.no_limits();
            probe
                .into_dimensions()
                .map_err(|err| ProfileError::Undecodable(err.to_string()))?
        };
        if width > MAX_PHOTO_SIDE || height > MAX_PHOTO_SIDE {
            return Err(ProfileError::PhotoTooBig { width, height });
        }
        if width == 0 || height == 0 {
            return Err(ProfileError::Undecodable("the image is empty".to_owned()));
        }
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
        let mut limits = Limits::default();
        limits.max_image_width = Some(MAX_PHOTO_SIDE);
        limits.max_image_height = Some(MAX_PHOTO_SIDE);
        // Four bytes per pixel of the largest image, and room to work.
        limits.max_alloc = Some(u64::from(MAX_PHOTO_SIDE).pow(2) * 4 + (8 << 20));
        reader.limits(limits);
        let image = reader
            .decode()
            .map_err(|err| ProfileError::Undecodable(err.to_string()))?;
        let short = width.min(height);
        let square = image.crop_imm((width - short) / 2, (height - short) / 2, short, short);
        let side = short.min(THUMBNAIL_SIDE);
        let thumbnail = square.resize_exact(side, side, FilterType::Triangle).into_rgba8();
        let mut png = Vec::new();
        thumbnail
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .map_err(|err| ProfileError::Undecodable(err.to_string()))?;
        Ok(Photo { png, side })
    }
}

/// The most matches a bot may ask to play at once.
pub const MAX_CONCURRENT_MATCHES: i64 = 8;

/// How long decoding and re-encoding a photo may take before it is refused.
pub const PHOTO_TIMEOUT: Duration = Duration::from_secs(5);

/// What an owner changes in a profile; `None` leaves a setting as it is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProfileChange {
    /// A new bio (empty removes it).
    pub bio: Option<String>,
    /// Automatic matching on or off.
    pub auto_match: Option<bool>,
    /// Whether people may play the bot from the site.
    pub people_play: Option<bool>,
    /// Matches at once, 1 to [`MAX_CONCURRENT_MATCHES`].
    pub concurrent_matches: Option<i64>,
    /// The ladders the bot's active version plays (games or ladder names):
    /// never empty; for an uploaded module only ladders it was uploaded
    /// for (its check covered those), for a remote bot any game (its remote
    /// ladder). Refused while the bot has a match queued or running.
    pub supported_games: Option<Vec<String>>,
}

/// `user_id`'s bot `name`: 404 when there is none, 403 when it is someone
/// else's.
async fn own_bot(core: &Core, user_id: i64, name: &str) -> Result<Bot> {
    let bot = bots::by_name(&core.db, name)
        .await?
        .ok_or_else(|| Error::not_found(format!("bot {name:?}")))?;
    if bot.owner_id.0 != user_id {
        return Err(Error::Forbidden(format!(
            "the bot {} belongs to someone else: only its owner changes its profile",
            bot.name
        )));
    }
    Ok(bot)
}

/// Changes the profile of `user_id`'s bot `name` and returns the bot as it
/// is now. 400 for a bio or a number out of bounds (nothing changed).
pub async fn update(core: &Core, user_id: i64, name: &str, change: ProfileChange) -> Result<Bot> {
    let bot = own_bot(core, user_id, name).await?;
    let bio = change
        .bio
        .as_deref()
        .map(check_bio)
        .transpose()
        .map_err(|e| Error::Invalid(e.to_string()))?;
    if let Some(n) = change.concurrent_matches
        && !(1..=MAX_CONCURRENT_MATCHES).contains(&n)
    {
        return Err(Error::Invalid(format!(
            "concurrent_matches must be 1 to {MAX_CONCURRENT_MATCHES}, not {n}"
        )));
    }
    if let Some(games) = &change.supported_games {
        set_supported_games(core, &bot, games).await?;
    }
    sqlx::query(
        "UPDATE bots SET bio = COALESCE($2, bio), auto_match = COALESCE($3, auto_match), \
         concurrent_matches = COALESCE($4, concurrent_matches), people_play = COALESCE($5, people_play) WHERE id = $1",
    )
    .bind(bot.id.0)
    .bind(bio)
    .bind(change.auto_match.map(i64::from))
    .bind(change.concurrent_matches)
    .bind(change.people_play.map(i64::from))
    .execute(&core.db.pool)
    .await?;
    reread(core, &bot.name).await
}

/// Sets the ladders of `bot`'s active version (see
/// [`ProfileChange::supported_games`]).
async fn set_supported_games(core: &Core, bot: &Bot, games: &[String]) -> Result<()> {
    let mut tx = core.db.begin_write().await?;
    let active: Option<(i64, String, Option<String>, i64)> =
        sqlx::query_as("SELECT id, ladders, remote_url, agent FROM versions WHERE bot_id = $1 AND status = 'active'")
            .bind(bot.id.0)
            .fetch_optional(&mut *tx)
            .await?;
    let Some((version_id, uploaded_for, remote_url, agent)) = active else {
        return Err(Error::Conflict(format!(
            "{} has no active version to choose games for",
            bot.name
        )));
    };
    let mut wanted = Vec::new();
    for game in games {
        let (variant, _) = crate::ladders::parse_any(game)?;
        if agent != 0 && !matches!(variant, arbiter_games::Variant::Othello(_)) {
            return Err(Error::Invalid(format!(
                "{} is an agent bot: it plays Othello only (FlipSight's agent API), not {game}",
                bot.name
            )));
        }
        let ladder = if remote_url.is_some() || agent != 0 {
            crate::ladders::remote_name(variant)
        } else {
            crate::ladders::name(variant)
        };
        if !wanted.contains(&ladder) {
            wanted.push(ladder);
        }
    }
    if wanted.is_empty() {
        return Err(Error::Invalid(
            "supported_games cannot be empty: a bot plays at least one game".into(),
        ));
    }
    if remote_url.is_none() && agent == 0 {
        let checked: Vec<String> = serde_json::from_str(&uploaded_for).unwrap_or_default();
        if let Some(unchecked) = wanted.iter().find(|ladder| !checked.contains(ladder)) {
            return Err(Error::Invalid(format!(
                "{unchecked} is not a ladder this version was uploaded and checked for ({}): upload it again \
                 with that ladder ticked",
                checked.join(", ")
            )));
        }
    }
    let busy: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM matches m JOIN versions v ON v.id = m.a_version OR v.id = m.b_version \
         WHERE v.bot_id = $1 AND m.status IN ('queued', 'running', 'pending')",
    )
    .bind(bot.id.0)
    .fetch_one(&mut *tx)
    .await?;
    if busy > 0 {
        return Err(Error::Conflict(format!(
            "{} has {busy} match(es) queued or running: change its games when they are over, or turn \
             automatic matching off first",
            bot.name
        )));
    }
    sqlx::query("DELETE FROM version_ladders WHERE version_id = $1")
        .bind(version_id)
        .execute(&mut *tx)
        .await?;
    for ladder in &wanted {
        sqlx::query("INSERT INTO version_ladders (version_id, ladder) VALUES ($1, $2)")
            .bind(version_id)
            .bind(ladder)
            .execute(&mut *tx)
            .await?;
        crate::ratings::ensure_row(&mut tx, version_id, ladder).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Makes `bytes` the photo of `user_id`'s bot `name` (re-encoded as a
/// square PNG thumbnail, see [`Photo::from_upload`]). 400 with the reason
/// for anything that is not an acceptable image, or that takes longer than
/// [`PHOTO_TIMEOUT`] to decode; nothing is stored then.
pub async fn set_photo(core: &Core, user_id: i64, name: &str, bytes: Vec<u8>) -> Result<Bot> {
    let bot = own_bot(core, user_id, name).await?;
    let decoding = tokio::task::spawn_blocking(move || Photo::from_upload(&bytes));
    let photo = tokio::time::timeout(PHOTO_TIMEOUT, decoding)
        .await
        .map_err(|_| {
            Error::Invalid(format!(
                "the photo took longer than {} s to decode",
                PHOTO_TIMEOUT.as_secs()
            ))
        })?
        .map_err(|e| Error::Internal(e.to_string()))?
        .map_err(|e| Error::Invalid(e.to_string()))?;
    let key = core
        .blobs
        .run(move |blobs| blobs.put(&photo.png))
        .await
        .map_err(|e| Error::Unavailable(format!("cannot store the photo: {e}")))?;
    sqlx::query("UPDATE bots SET photo_sha256 = $2 WHERE id = $1")
        .bind(bot.id.0)
        .bind(key)
        .execute(&core.db.pool)
        .await?;
    reread(core, &bot.name).await
}

/// Removes the photo of `user_id`'s bot `name`.
pub async fn remove_photo(core: &Core, user_id: i64, name: &str) -> Result<Bot> {
    let bot = own_bot(core, user_id, name).await?;
    sqlx::query("UPDATE bots SET photo_sha256 = NULL WHERE id = $1")
        .bind(bot.id.0)
        .execute(&core.db.pool)
        .await?;
    reread(core, &bot.name).await
}

/// The PNG of bot `name`'s photo, if it has one.
pub async fn photo_png(core: &Core, name: &str) -> Result<Option<Vec<u8>>> {
    let key: Option<Option<String>> = sqlx::query_scalar("SELECT photo_sha256 FROM bots WHERE name_key = $1")
        .bind(name.to_lowercase())
        .fetch_optional(&core.db.pool)
        .await?;
    let Some(key) = key.flatten() else {
        return Ok(None);
    };
    core.blobs
        .run(move |blobs| blobs.get(&key))
        .await
        .map_err(|e| Error::Unavailable(format!("cannot read the photo: {e}")))
}

async fn reread(core: &Core, name: &str) -> Result<Bot> {
    bots::by_name(&core.db, name)
        .await?
        .ok_or_else(|| Error::not_found(format!("bot {name:?}")))
}

/// Checks a bio: at most [`MAX_BIO_CHARS`] characters of plain text
/// (newlines and tabs allowed), surrounding whitespace dropped. It is stored
/// as written and escaped wherever it is shown.
///
/// # Errors
///
/// [`ProfileError::BioTooLong`] or [`ProfileError::BioControl`].
pub fn check_bio(bio: &str) -> Result<String, ProfileError> {
    let bio = bio.trim();
    let chars = bio.chars().count();
    if chars > MAX_BIO_CHARS {
        return Err(ProfileError::BioTooLong(chars));
    }
    if bio.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t')) {
        return Err(ProfileError::BioControl);
    }
    Ok(bio.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage};

    fn encoded(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
        let image = RgbImage::from_fn(width, height, |x, y| Rgb([(x % 256) as u8, (y % 256) as u8, 99]));
        let mut bytes = Vec::new();
        image.write_to(&mut Cursor::new(&mut bytes), format).expect("encodes");
        bytes
    }

    /// A PNG chunk: length, type, data, CRC.
    fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
        let mut out = u32::try_from(data.len()).expect("small").to_be_bytes().to_vec();
        out.extend_from_slice(kind);
        out.extend_from_slice(data);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(kind);
        hasher.update(data);
        out.extend_from_slice(&hasher.finalize().to_be_bytes());
        out
    }

    /// `png` with a chunk inserted after its header chunk.
    fn with_chunk(png: &[u8], extra: &[u8]) -> Vec<u8> {
        // 8 bytes of signature, then IHDR: 4 + 4 + 13 + 4 bytes.
        let at = 8 + 25;
        [&png[..at], extra, &png[at..]].concat()
    }

    #[test]
    fn a_png_text_chunk_is_dropped() {
        let png = encoded(ImageFormat::Png, 300, 200);
        let secret = b"Comment\0my home address is 12 Secret Lane";
        let upload = with_chunk(&png, &chunk(b"tEXt", secret));
        assert!(upload.windows(11).any(|w| w == b"Secret Lane"));
        let photo = Photo::from_upload(&upload).expect("a valid PNG");
        assert!(!photo.png.windows(11).any(|w| w == b"Secret Lane"));
        assert!(!photo.png.windows(4).any(|w| w == b"tEXt"));
        assert_eq!(photo.side, 200);
        let back = image::load_from_memory_with_format(&photo.png, ImageFormat::Png).expect("a PNG");
        assert_eq!((back.width(), back.height()), (200, 200));
    }

    #[test]
    fn a_jpeg_exif_block_is_dropped() {
        let jpeg = encoded(ImageFormat::Jpeg, 640, 480);
        let mut exif = b"Exif\0\0MM\0*\0\0\0\x08GPS 48.8584 2.2945".to_vec();
        let mut app1 = vec![0xff, 0xe1];
        app1.extend_from_slice(&u16::try_from(exif.len() + 2).expect("small").to_be_bytes());
        app1.append(&mut exif);
        let upload = [&jpeg[..2], &app1[..], &jpeg[2..]].concat();
        let photo = Photo::from_upload(&upload).expect("a valid JPEG");
        assert!(!photo.png.windows(4).any(|w| w == b"Exif"));
        assert!(!photo.png.windows(7).any(|w| w == b"48.8584"));
        assert_eq!(photo.side, THUMBNAIL_SIDE);
        assert!(photo.png.starts_with(b"\x89PNG"));
    }

    #[test]
    fn a_webp_is_accepted() {
        let webp = encoded(ImageFormat::WebP, 64, 80);
        let photo = Photo::from_upload(&webp).expect("a valid WebP");
        assert_eq!(photo.side, 64);
    }

    #[test]
    fn a_declared_image_bomb_is_refused_before_decoding() {
        let png = encoded(ImageFormat::Png, 16, 16);
        let mut ihdr = png[16..29].to_vec();
        ihdr[..4].copy_from_slice(&30_000u32.to_be_bytes());
        ihdr[4..8].copy_from_slice(&30_000u32.to_be_bytes());
        let bomb = [&png[..8], &chunk(b"IHDR", &ihdr)[..], &png[33..]].concat();
        assert_eq!(
            Photo::from_upload(&bomb),
            Err(ProfileError::PhotoTooBig {
                width: 30_000,
                height: 30_000
            })
        );
    }

    #[test]
    fn other_files_are_refused_with_a_reason() {
        assert_eq!(Photo::from_upload(b"GIF89a......"), Err(ProfileError::NotAnImage));
        assert_eq!(Photo::from_upload(b"<svg xmlns=...>"), Err(ProfileError::NotAnImage));
        assert_eq!(
            Photo::from_upload(b"#!/bin/sh\nrm -rf /"),
            Err(ProfileError::NotAnImage)
        );
        let big = vec![0u8; MAX_PHOTO_BYTES + 1];
        assert_eq!(
            Photo::from_upload(&big),
            Err(ProfileError::PhotoTooLarge(MAX_PHOTO_BYTES + 1))
        );
        let png = encoded(ImageFormat::Png, 32, 32);
        assert!(matches!(
            Photo::from_upload(&png[..png.len() / 2]),
            Err(ProfileError::Undecodable(_))
        ));
        let message = Photo::from_upload(&big).expect_err("refused").to_string();
        assert!(message.contains("512 KiB"), "{message}");
    }

    #[test]
    fn a_bio_is_plain_text_of_bounded_length() {
        assert_eq!(
            check_bio("  I play <b>Othello</b>.\n"),
            Ok("I play <b>Othello</b>.".to_owned())
        );
        assert_eq!(check_bio(&"é".repeat(500)).map(|b| b.chars().count()), Ok(500));
        assert_eq!(check_bio(&"x".repeat(501)), Err(ProfileError::BioTooLong(501)));
        assert_eq!(check_bio("bell\u{7}"), Err(ProfileError::BioControl));
    }
}
