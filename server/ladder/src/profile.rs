//! A bot's profile as its owner writes it: a photo and a bio, checked here
//! before anything is stored.
//!
//! A photo is never stored as uploaded. [`Photo::from_upload`] reads its
//! header, refuses anything that is not a PNG, JPEG or WebP within
//! [`MAX_PHOTO_BYTES`], [`MAX_PHOTO_SIDE`] pixels a side and
//! [`MAX_PHOTO_DECODED_BYTES`] of decoded pixels (before any pixel is
//! decoded, so a small file declaring a huge image costs nothing), decodes
//! it under an allocation cap of the size the header declared, and
//! re-encodes the centre square as a PNG of at most [`THUMBNAIL_SIDE`]
//! pixels a side: text chunks, EXIF, ICC profiles and anything else the
//! upload carried are gone.
//!
//! Decoding is the one costly step (a 65 KB PNG may declare 4096 × 4096
//! pixels, 64 MiB decoded), so uploads go through a [`PhotoGate`]: at most
//! [`PhotoGate::decoders`] decodes at once in the process and
//! [`PhotoGate::queue`] waiting; more are refused at once with
//! [`Error::Busy`] (503 with `Retry-After`). A decode that outlives
//! [`PHOTO_TIMEOUT`] is answered then and stops at its next step; its place
//! in the gate is given back only when its work has really ended.

use std::io::Cursor;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use image::{DynamicImage, ImageDecoder, ImageFormat, ImageReader, Limits, RgbaImage, imageops};
use tokio::sync::Semaphore;

use crate::bots::{self, Bot};
use crate::core::Core;
use crate::error::{Error, Result};

/// The largest photo upload, in bytes.
pub const MAX_PHOTO_BYTES: usize = 512 * 1024;
/// The widest and tallest photo accepted, in pixels.
pub const MAX_PHOTO_SIDE: u32 = 4096;
/// The most bytes a photo's decoded pixels may take: 4096 × 4096 at four
/// bytes a pixel (8-bit RGBA). A photo of 16 bits a channel is accepted up
/// to half as many pixels.
pub const MAX_PHOTO_DECODED_BYTES: u64 = 64 << 20;
/// What a decoder may allocate beyond the pixels its header declares (row
/// buffers, inflate windows).
const DECODE_WORK_BYTES: u64 = 4 << 20;
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
    /// Its header declares pixels that take more than
    /// [`MAX_PHOTO_DECODED_BYTES`] decoded (many pixels of 16 bits a
    /// channel).
    #[error(
        "the photo would take {} MiB once decoded; at most 64 MiB (4096 × 4096 at 8 bits a channel) are accepted",
        .0.div_ceil(1 << 20)
    )]
    PhotoTooHeavy(u64),
    /// A header or pixel data that does not decode.
    #[error("the photo cannot be decoded: {0}")]
    Undecodable(String),
    /// Decoding took longer than [`PHOTO_TIMEOUT`] and was stopped.
    #[error("the photo took longer than {} s to decode; send a smaller one", PHOTO_TIMEOUT.as_secs())]
    TooSlow,
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
    /// Checks an uploaded photo and makes its thumbnail, on this thread and
    /// without a time limit (uploads go through [`PhotoGate::thumbnail`]).
    ///
    /// # Errors
    ///
    /// A [`ProfileError`] saying what is wrong with the upload.
    pub fn from_upload(bytes: &[u8]) -> Result<Photo, ProfileError> {
        Photo::from_upload_unless(bytes, &AtomicBool::new(false))
    }

    /// [`Photo::from_upload`], stopping with [`ProfileError::TooSlow`] at
    /// the first step that begins after `stop` is set: the header, the
    /// decode, the thumbnail and the encoding are steps (a step under way
    /// runs to its end).
    fn from_upload_unless(bytes: &[u8], stop: &AtomicBool) -> Result<Photo, ProfileError> {
        let go_on = || {
            if stop.load(Ordering::Relaxed) {
                Err(ProfileError::TooSlow)
            } else {
                Ok(())
            }
        };
        let undecodable = |err: image::ImageError| ProfileError::Undecodable(err.to_string());
        if bytes.len() > MAX_PHOTO_BYTES {
            return Err(ProfileError::PhotoTooLarge(bytes.len()));
        }
        let format = image::guess_format(bytes).map_err(|_| ProfileError::NotAnImage)?;
        if !matches!(format, ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP) {
            return Err(ProfileError::NotAnImage);
        }
        go_on()?;
        // The header alone first: a declared size over the limits is
        // refused before any pixel is decoded.
        let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
        let mut header_limits = Limits::no_limits();
        header_limits.max_alloc = Some(MAX_PHOTO_DECODED_BYTES + DECODE_WORK_BYTES);
        reader.limits(header_limits);
        let mut decoder = reader.into_decoder().map_err(undecodable)?;
        let (width, height) = decoder.dimensions();
        if width > MAX_PHOTO_SIDE || height > MAX_PHOTO_SIDE {
            return Err(ProfileError::PhotoTooBig { width, height });
        }
        if width == 0 || height == 0 {
            return Err(ProfileError::Undecodable("the image is empty".to_owned()));
        }
        let pixels = decoder.total_bytes();
        if pixels > MAX_PHOTO_DECODED_BYTES {
            return Err(ProfileError::PhotoTooHeavy(pixels));
        }
        // Then the pixels, allocating what the header declared and little
        // more.
        let mut limits = Limits::no_limits();
        limits.max_image_width = Some(MAX_PHOTO_SIDE);
        limits.max_image_height = Some(MAX_PHOTO_SIDE);
        limits.max_alloc = Some(pixels + DECODE_WORK_BYTES);
        decoder.set_limits(limits).map_err(undecodable)?;
        go_on()?;
        let image = DynamicImage::from_decoder(decoder).map_err(undecodable)?;
        go_on()?;
        let short = width.min(height);
        let side = short.min(THUMBNAIL_SIDE);
        let (x, y) = ((width - short) / 2, (height - short) / 2);
        // The centre square is a view, not a copy: the decoded image is
        // the only large allocation.
        let thumbnail: RgbaImage = match &image {
            DynamicImage::ImageRgb8(rgb) => DynamicImage::ImageRgb8(imageops::thumbnail(
                &*imageops::crop_imm(rgb, x, y, short, short),
                side,
                side,
            ))
            .into_rgba8(),
            DynamicImage::ImageRgba8(rgba) => {
                imageops::thumbnail(&*imageops::crop_imm(rgba, x, y, short, short), side, side)
            }
            other => imageops::thumbnail(&*imageops::crop_imm(other, x, y, short, short), side, side),
        };
        drop(image);
        go_on()?;
        let mut png = Vec::new();
        thumbnail
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .map_err(undecodable)?;
        debug_assert_eq!(thumbnail.dimensions(), (side, side));
        Ok(Photo { png, side })
    }
}

/// How long a photo may wait for a decoder, and then how long its decoding
/// and re-encoding may take, before it is refused.
pub const PHOTO_TIMEOUT: Duration = Duration::from_secs(5);

/// The `Retry-After` of a photo refused because every decoder is busy.
pub const PHOTO_RETRY_AFTER: Duration = Duration::from_secs(2);

/// The most photo decodes at once in a process, whatever its cores: each
/// holds up to [`MAX_PHOTO_DECODED_BYTES`] of pixels, and some decoders
/// more besides (a progressive JPEG keeps its coefficients too).
pub const MAX_PHOTO_DECODERS: usize = 2;

/// Photos waiting for a decoder, per decoder.
pub const PHOTO_QUEUE_PER_DECODER: usize = 2;

/// Bounds photo decoding: at most [`PhotoGate::decoders`] decodes run at
/// once and [`PhotoGate::queue`] wait for one; a photo beyond those is
/// refused at once with [`Error::Busy`]. A decode keeps its place until its
/// blocking work has ended, even when its caller was answered (timed out)
/// or went away first, so the bound holds for the work itself.
#[derive(Debug)]
pub struct PhotoGate {
    /// Places for photos decoding or waiting.
    admitted: Arc<Semaphore>,
    /// Places for photos decoding.
    running: Arc<Semaphore>,
    decoders: usize,
    queue: usize,
    /// Decodes whose blocking work is under way now.
    decoding: Arc<AtomicUsize>,
    /// The most [`PhotoGate::decoding`] has been.
    peak: Arc<AtomicUsize>,
    timeout: Duration,
}

/// The gate every upload of this process goes through (decoding is bound by
/// the machine, not by a database or a blob store: one per process).
static GATE: LazyLock<PhotoGate> = LazyLock::new(PhotoGate::for_this_machine);

/// This process's [`PhotoGate`], sized by [`PhotoGate::for_this_machine`].
pub fn photo_gate() -> &'static PhotoGate {
    &GATE
}

/// Counts a decode as under way while it lives.
struct Decoding(Arc<AtomicUsize>);

impl Decoding {
    fn start(now: &Arc<AtomicUsize>, peak: &AtomicUsize) -> Decoding {
        let running = now.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(running, Ordering::SeqCst);
        Decoding(Arc::clone(now))
    }
}

impl Drop for Decoding {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Tells a decode to stop at its next step when the caller stops waiting
/// (answered, timed out or gone).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl PhotoGate {
    /// A gate of `decoders` decodes at once (at least one) and `queue`
    /// waiting, each waiting and decoding for at most [`PHOTO_TIMEOUT`].
    pub fn new(decoders: usize, queue: usize) -> PhotoGate {
        PhotoGate::with_timeout(decoders, queue, PHOTO_TIMEOUT)
    }

    /// [`PhotoGate::new`] with another time limit (for tests).
    pub fn with_timeout(decoders: usize, queue: usize, timeout: Duration) -> PhotoGate {
        let decoders = decoders.max(1);
        PhotoGate {
            admitted: Arc::new(Semaphore::new(decoders + queue)),
            running: Arc::new(Semaphore::new(decoders)),
            decoders,
            queue,
            decoding: Arc::default(),
            peak: Arc::default(),
            timeout,
        }
    }

    /// One decoder per core, at most [`MAX_PHOTO_DECODERS`], and
    /// [`PHOTO_QUEUE_PER_DECODER`] waiting per decoder.
    pub fn for_this_machine() -> PhotoGate {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let decoders = cores.clamp(1, MAX_PHOTO_DECODERS);
        PhotoGate::new(decoders, decoders * PHOTO_QUEUE_PER_DECODER)
    }

    /// The most decodes at once.
    pub fn decoders(&self) -> usize {
        self.decoders
    }

    /// The most photos waiting for a decoder.
    pub fn queue(&self) -> usize {
        self.queue
    }

    /// Decodes under way now (blocking work that has started and not
    /// ended); never more than [`PhotoGate::decoders`].
    pub fn decoding(&self) -> usize {
        self.decoding.load(Ordering::SeqCst)
    }

    /// The most decodes that were ever under way at once.
    pub fn peak_decoding(&self) -> usize {
        self.peak.load(Ordering::SeqCst)
    }

    /// Makes the thumbnail of an upload ([`Photo::from_upload`]) on a
    /// blocking thread, within the gate's bounds.
    ///
    /// # Errors
    ///
    /// [`Error::Busy`] when every decoder is taken and the queue is full,
    /// or no decoder came free within the time limit; [`Error::Invalid`]
    /// with the [`ProfileError`] for an upload that is refused or takes
    /// longer than the time limit to decode (it stops at its next step).
    pub async fn thumbnail(&self, bytes: Vec<u8>) -> Result<Photo> {
        let busy = || Error::Busy {
            message: format!(
                "the server is decoding as many photos as it can ({} at once, {} waiting): try again in {} s",
                self.decoders,
                self.queue,
                PHOTO_RETRY_AFTER.as_secs()
            ),
            retry_after_s: PHOTO_RETRY_AFTER.as_secs(),
        };
        let admitted = Arc::clone(&self.admitted).try_acquire_owned().map_err(|_| busy())?;
        let running = tokio::time::timeout(self.timeout, Arc::clone(&self.running).acquire_owned())
            .await
            .map_err(|_| busy())?
            .map_err(|_| Error::Internal("the photo decoders are closed".to_owned()))?;
        let stop = StopOnDrop(Arc::new(AtomicBool::new(false)));
        let (now, peak, flag) = (Arc::clone(&self.decoding), Arc::clone(&self.peak), Arc::clone(&stop.0));
        let work = tokio::task::spawn_blocking(move || {
            // Held until the work ends, whoever is still waiting for it.
            // The count goes down before the places are given back, so it never
            // reads more than the decoders.
            let _places = (Decoding::start(&now, &peak), running, admitted);
            Photo::from_upload_unless(&bytes, &flag)
        });
        let outcome = tokio::time::timeout(self.timeout, work).await;
        drop(stop);
        match outcome {
            Ok(Ok(photo)) => photo.map_err(|e| Error::Invalid(e.to_string())),
            Ok(Err(join)) => Err(Error::Internal(format!("the photo decode failed: {join}"))),
            Err(_) => Err(Error::Invalid(ProfileError::TooSlow.to_string())),
        }
    }
}

/// The most matches a bot may ask to play at once.
pub const MAX_CONCURRENT_MATCHES: i64 = 8;

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
/// square PNG thumbnail, see [`Photo::from_upload`], through this process's
/// [`photo_gate`]). 400 with the reason for anything that is not an
/// acceptable image, or that takes longer than [`PHOTO_TIMEOUT`] to
/// decode; 503 with a retry delay ([`Error::Busy`]) when every decoder is
/// taken and the queue is full; nothing is stored then.
pub async fn set_photo(core: &Core, user_id: i64, name: &str, bytes: Vec<u8>) -> Result<Bot> {
    let bot = own_bot(core, user_id, name).await?;
    let photo = photo_gate().thumbnail(bytes).await?;
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

/// Bot `name`'s current photo: what tells it from any other and where
/// its PNG is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhotoRef {
    key: String,
}

impl PhotoRef {
    /// The photo's version: the `v` of the address [`bots::photo_path`]
    /// gives it (the start of its content's SHA-256), different for every
    /// other photo.
    pub fn version(&self) -> &str {
        photo_version(&self.key)
    }
}

/// The `v` that [`bots::photo_path`] puts in the address of the photo
/// stored under blob key `sha256`.
fn photo_version(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// Bot `name`'s current photo, if it has one (a name in any case).
pub async fn photo_ref(core: &Core, name: &str) -> Result<Option<PhotoRef>> {
    let key: Option<Option<String>> = sqlx::query_scalar("SELECT photo_sha256 FROM bots WHERE name_key = $1")
        .bind(name.to_lowercase())
        .fetch_optional(&core.db.pool)
        .await?;
    Ok(key.flatten().map(|key| PhotoRef { key }))
}

/// The PNG of `photo` (`None` if the blob store no longer has it).
pub async fn photo_png(core: &Core, photo: &PhotoRef) -> Result<Option<Vec<u8>>> {
    let key = photo.key.clone();
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
    fn a_photo_too_heavy_once_decoded_is_refused_before_decoding() {
        // 4096 × 4096 at 16 bits a channel: 128 MiB decoded, from a header.
        let png = encoded(ImageFormat::Png, 16, 16);
        let mut ihdr = png[16..29].to_vec();
        ihdr[..4].copy_from_slice(&4096u32.to_be_bytes());
        ihdr[4..8].copy_from_slice(&4096u32.to_be_bytes());
        ihdr[8] = 16; // bit depth
        ihdr[9] = 6; // RGBA
        let heavy = [&png[..8], &chunk(b"IHDR", &ihdr)[..], &png[33..]].concat();
        assert_eq!(Photo::from_upload(&heavy), Err(ProfileError::PhotoTooHeavy(128 << 20)));
        let message = ProfileError::PhotoTooHeavy(128 << 20).to_string();
        assert!(message.contains("128 MiB") && message.contains("64 MiB"), "{message}");
    }

    #[test]
    fn a_stopped_decode_stops_at_its_next_step() {
        let png = encoded(ImageFormat::Png, 64, 64);
        assert_eq!(
            Photo::from_upload_unless(&png, &AtomicBool::new(true)),
            Err(ProfileError::TooSlow)
        );
        assert!(Photo::from_upload_unless(&png, &AtomicBool::new(false)).is_ok());
    }

    #[test]
    fn a_photo_version_is_the_one_in_its_address() {
        let key = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let photo = PhotoRef { key: key.to_owned() };
        assert!(
            bots::photo_path("ann", key).ends_with(&format!("/photo.png?v={}", photo.version())),
            "{}",
            bots::photo_path("ann", key)
        );
    }

    /// The worst photo for its size: 4096 × 4096 RGBA of one colour, 64 MiB
    /// decoded from about 65 KB.
    fn worst_case_png() -> Vec<u8> {
        let mut png = Vec::new();
        image::RgbaImage::new(MAX_PHOTO_SIDE, MAX_PHOTO_SIDE)
            .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
            .expect("encodes");
        assert!(png.len() < MAX_PHOTO_BYTES, "{} bytes", png.len());
        png
    }

    /// The most resident memory this process has had, in bytes, on Linux.
    fn peak_rss() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
        let kib: u64 = line
            .trim_start_matches("VmHWM:")
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    }

    /// Sixteen worst-case photos at once through a gate of two decoders and
    /// four places in the queue: six are decoded, never more than two at
    /// once, and ten are told at once to come back later. Prints how much
    /// the process grew at its peak (run alone for a clean figure: `cargo
    /// test -p arbiter-ladder --lib sixteen_worst_case -- --nocapture`).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sixteen_worst_case_photos_decode_two_at_a_time_and_the_rest_are_told_to_retry() {
        let png = Arc::new(worst_case_png());
        let gate = Arc::new(PhotoGate::with_timeout(2, 4, Duration::from_secs(600)));
        // Resets the peak to what is resident now (Linux 4.0 and later).
        let measured = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let before = peak_rss();
        let started = std::time::Instant::now();
        let uploads: Vec<_> = (0..16)
            .map(|_| {
                let (gate, png) = (Arc::clone(&gate), Arc::clone(&png));
                tokio::spawn(async move { gate.thumbnail(png.to_vec()).await })
            })
            .collect();
        let (mut decoded, mut busy) = (0, 0);
        for upload in uploads {
            match upload.await.expect("the upload task ends") {
                Ok(photo) => {
                    assert_eq!(photo.side, THUMBNAIL_SIDE);
                    decoded += 1;
                }
                Err(Error::Busy { retry_after_s, message }) => {
                    assert!(retry_after_s >= 1, "{message}");
                    assert!(message.contains("try again"), "{message}");
                    busy += 1;
                }
                Err(other) => panic!("neither decoded nor busy: {other:?}"),
            }
        }
        assert_eq!((decoded, busy), (6, 10), "two decoding and four waiting are admitted");
        assert_eq!(gate.peak_decoding(), 2, "two at once, never more");
        assert_eq!(gate.decoding(), 0);
        if let (true, Some(before), Some(after)) = (measured, before, peak_rss()) {
            let growth = after.saturating_sub(before);
            println!(
                "16 concurrent 4096 × 4096 PNGs ({} bytes each): peak RSS grew by {} MiB in {:.1} s",
                png.len(),
                growth >> 20,
                started.elapsed().as_secs_f64()
            );
            assert!(growth < 600 << 20, "peak RSS grew by {} MiB", growth >> 20);
        }
    }

    /// A decode that outlives its time limit is answered then, and keeps
    /// its place in the gate until its work has stopped: the gate is full
    /// meanwhile, and free again afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_decode_past_its_time_limit_keeps_its_place_until_it_stops() {
        let gate = PhotoGate::with_timeout(1, 0, Duration::from_millis(50));
        // (No wall-clock bound here: a busy machine may take long to start
        // the decode at all; the answer is the time limit's, whenever.)
        let slow = gate.thumbnail(worst_case_png()).await;
        assert!(
            matches!(&slow, Err(Error::Invalid(message)) if message.contains("longer than")),
            "{slow:?}"
        );
        if gate.decoding() == 1 {
            let small = encoded(ImageFormat::Png, 16, 16);
            assert!(matches!(gate.thumbnail(small).await, Err(Error::Busy { .. })));
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while gate.decoding() > 0 {
            assert!(std::time::Instant::now() < deadline, "the stopped decode never ended");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(gate.admitted.available_permits(), 1, "its place is given back");
        assert_eq!(gate.running.available_permits(), 1);
        assert!(gate.peak_decoding() <= 1);
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
