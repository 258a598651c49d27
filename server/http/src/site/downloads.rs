//! Downloads for a newcomer who has only the site: this server's own
//! `arbiter` executable (the referee and sandbox the ladder runs, so local
//! `check` and `play` answer as the server does) with its SHA-256, and each
//! bot kit as a `.tar.gz` (see `arbiter_kits`).
//!
//! | path | what |
//! |---|---|
//! | `/download/arbiter` | the running executable's bytes |
//! | `/download/arbiter.sha256` | its digest, in `sha256sum` format |
//! | `/download/kits/{lang}.tar.gz` | the kit for `lang` (`rust.tar.gz`: a cargo project with the SDK and the rules inside) |

use super::{SiteError, SiteResult};
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use sha2::{Digest, Sha256};
use std::fmt::Write;
use std::sync::OnceLock;
use tokio::sync::OnceCell;

/// The running executable, read and hashed once, on first use.
#[derive(Debug)]
pub struct Executable {
    /// The file's bytes, as they were when first read.
    pub bytes: Bytes,
    /// Lower-case hex SHA-256 of [`Executable::bytes`].
    pub sha256: String,
}

/// The executable's file name in downloads and in the digest line.
pub const EXECUTABLE_NAME: &str = "arbiter";

/// This build's version (the workspace's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The platform the running executable is built for, as people name it:
/// `Linux x86-64` on the server the ladder runs on.
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "macOS",
        "windows" => "Windows",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x86-64",
        "aarch64" => "ARM64",
        other => other,
    };
    format!("{os} {arch}")
}

/// The running executable: read from [`std::env::current_exe`] and hashed
/// on the first call (off the async threads), the same bytes and digest on
/// every later call. A failed read is not kept: the next call tries again.
pub async fn executable() -> Result<&'static Executable, SiteError> {
    static EXECUTABLE: OnceCell<Executable> = OnceCell::const_new();
    EXECUTABLE
        .get_or_try_init(|| async {
            let read = tokio::task::spawn_blocking(|| -> std::io::Result<Executable> {
                let bytes = std::fs::read(std::env::current_exe()?)?;
                let sha256 = hex(&Sha256::digest(&bytes));
                Ok(Executable {
                    bytes: Bytes::from(bytes),
                    sha256,
                })
            })
            .await;
            match read {
                Ok(Ok(executable)) => Ok(executable),
                Ok(Err(error)) => {
                    tracing::error!(%error, "cannot read the running executable for download");
                    Err(unavailable())
                }
                Err(error) => {
                    tracing::error!(%error, "reading the running executable failed");
                    Err(unavailable())
                }
            }
        })
        .await
}

/// The answer when the executable cannot be read.
fn unavailable() -> SiteError {
    SiteError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "the arbiter executable cannot be read on this server just now",
    )
}

/// `bytes` as lower-case hex.
fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}

/// `GET /download/arbiter`: the running executable, as an attachment.
pub async fn arbiter() -> SiteResult {
    let executable = executable().await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{EXECUTABLE_NAME}\""),
            ),
            (header::CACHE_CONTROL, "no-cache".to_owned()),
        ],
        executable.bytes.clone(),
    )
        .into_response())
}

/// `GET /download/arbiter.sha256`: `HEX  arbiter`, what `sha256sum -c`
/// reads.
pub async fn arbiter_sha256() -> SiteResult {
    let executable = executable().await?;
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{EXECUTABLE_NAME}.sha256\""),
            ),
            (header::CACHE_CONTROL, "no-cache".to_owned()),
        ],
        format!("{}  {EXECUTABLE_NAME}\n", executable.sha256),
    )
        .into_response())
}

/// The file name a kit's archive is served under: `LANG.tar.gz`.
pub fn kit_file(language: &str) -> String {
    format!("{language}.tar.gz")
}

/// Every kit's archive, built once: (language, archive).
fn kit_archives() -> &'static [(&'static str, Bytes)] {
    static ARCHIVES: OnceLock<Vec<(&'static str, Bytes)>> = OnceLock::new();
    ARCHIVES.get_or_init(|| {
        arbiter_kits::kits()
            .iter()
            .filter_map(|kit| match kit.archive() {
                Ok(bytes) => Some((kit.language(), Bytes::from(bytes))),
                Err(error) => {
                    tracing::error!(%error, language = kit.language(), "cannot archive a kit");
                    None
                }
            })
            .collect()
    })
}

/// `GET /download/kits/{file}`: the kit `LANG.tar.gz` (unknown names are
/// the 404 page).
pub async fn kit(Path(file): Path<String>) -> SiteResult {
    let Some(language) = file.strip_suffix(".tar.gz") else {
        return Err(SiteError::not_found(format!("the kit archive {file}")));
    };
    let Some((language, bytes)) = kit_archives().iter().find(|(name, _)| *name == language) else {
        return Err(SiteError::not_found(format!("a kit for {language}")));
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/gzip".to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"arbiter-kit-{language}.tar.gz\""),
            ),
        ],
        bytes.clone(),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lower_case_hex() {
        assert_eq!(
            hex(&Sha256::digest(b"abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn the_platform_is_named_as_people_name_it() {
        if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
            assert_eq!(platform(), "Linux x86-64");
        }
        assert!(!platform().is_empty());
    }

    #[tokio::test]
    async fn the_executable_is_the_running_file_and_its_digest() {
        let executable = executable().await.expect("the test program can be read");
        let on_disk = std::fs::read(std::env::current_exe().expect("a path")).expect("readable");
        assert_eq!(executable.bytes, on_disk);
        assert_eq!(executable.sha256, hex(&Sha256::digest(&on_disk)));
        assert!(std::ptr::eq(executable, executable_again().await), "read once");
    }

    async fn executable_again() -> &'static Executable {
        executable().await.expect("readable")
    }

    #[test]
    fn every_kit_has_an_archive() {
        let archived: Vec<&str> = kit_archives().iter().map(|(l, _)| *l).collect();
        assert_eq!(archived, arbiter_kits::languages());
    }

    #[tokio::test]
    async fn the_rust_kit_is_served_with_the_sdk_inside() {
        let response = kit(Path("rust.tar.gz".to_owned())).await.expect("a Rust kit");
        assert_eq!(response.status(), StatusCode::OK);
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("a body");
        let expected = arbiter_kits::kit("rust")
            .expect("a Rust kit")
            .archive()
            .expect("an archive");
        assert_eq!(body.as_ref(), expected.as_slice(), "the same bytes every time");
        // The tar stream holds every entry's name as it is.
        let mut tar = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(body.as_ref()), &mut tar).expect("gzip");
        let holds = |name: &str| tar.windows(name.len()).any(|w| w == name.as_bytes());
        for needed in [
            "arbiter-kit-rust/Cargo.toml",
            "arbiter-kit-rust/Cargo.lock",
            "arbiter-kit-rust/src/main.rs",
            "arbiter-kit-rust/arbiter/sdk/Cargo.toml",
            "arbiter-kit-rust/arbiter/games/src/lib.rs",
        ] {
            assert!(holds(needed), "{needed} in the archive");
        }
    }
}
