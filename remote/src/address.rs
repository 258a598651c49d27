//! Bot URLs and the addresses they may reach.
//!
//! A remote bot is a URL someone typed. Before anything connects to it, the
//! URL is read ([`BotUrl::parse`]), its host is resolved once, and every
//! address it resolves to is checked against an [`AddressPolicy`]: by
//! default only public unicast addresses pass, so a bot URL cannot make the
//! server reach its own loopback, its private network or a cloud metadata
//! service. The connection then goes to the checked address only
//! ([`Target::addr`]), so a name that resolves differently a second later
//! changes nothing.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

use url::{Host, Url};

/// The longest bot URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// Which kind of transport a URL names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// `http://` or `https://`: one POST per request (botsarena's transport).
    Http,
    /// `ws://` or `wss://`: one text frame each way per request (the Arène
    /// design's transport, used for skirmish).
    WebSocket,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Transport::Http => "HTTP",
            Transport::WebSocket => "WebSocket",
        })
    }
}

/// Why a bot URL cannot be used. Every message names the URL's problem in
/// words a bot author can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("{url:?} is not a URL: {reason}")]
    Syntax {
        /// The text given (cut to 200 characters).
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// Longer than [`MAX_URL_BYTES`].
    #[error("the bot URL is {0} bytes long; at most {MAX_URL_BYTES} are accepted")]
    TooLong(usize),
    /// A scheme other than http, https, ws and wss.
    #[error("{url} uses the scheme {scheme:?}: a bot URL starts with http://, https://, ws:// or wss://")]
    Scheme {
        /// The URL.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A user name or password in the URL: the referee sends no credentials.
    #[error("{0} carries a user name or password; bot URLs must not (the referee sends no credentials)")]
    Credentials(String),
    /// No host, or a host that did not resolve.
    #[error("{url}: cannot resolve {host}: {reason}")]
    Resolve {
        /// The URL.
        url: String,
        /// Its host.
        host: String,
        /// What the resolver said.
        reason: String,
    },
    /// The host is or resolves to an address the policy refuses.
    #[error(
        "{url} is refused: {host} is {address}, {kind}; a bot must be reachable on a public address \
         (a server started with --allow-private-bot-urls accepts it)"
    )]
    NotPublic {
        /// The URL.
        url: String,
        /// Its host, as written.
        host: String,
        /// The refused address.
        address: IpAddr,
        /// What kind of address it is (`a loopback address`, ...).
        kind: &'static str,
    },
}

/// Which addresses bot URLs may reach.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Whether loopback, private, link-local and other non-public addresses
    /// are allowed (a bot on the author's own machine or LAN). Off by
    /// default; the command line turns it on for local play.
    pub allow_private: bool,
}

impl AddressPolicy {
    /// Public addresses only: what a server uses unless told otherwise.
    pub const PUBLIC_ONLY: AddressPolicy = AddressPolicy { allow_private: false };
    /// Any address: for an author's own machine.
    pub const ANY: AddressPolicy = AddressPolicy { allow_private: true };

    /// Resolves `url`'s host once and checks every address it gives; the
    /// [`Target`] connects to the first one only.
    ///
    /// # Errors
    ///
    /// [`UrlError::Resolve`] when the host does not resolve,
    /// [`UrlError::NotPublic`] when any address it resolves to is refused
    /// (a name with one public and one private address is refused too).
    pub fn resolve(&self, url: &BotUrl) -> Result<Target, UrlError> {
        let host = url.host_text();
        let port = url.port();
        let addrs: Vec<SocketAddr> = match url.url.host() {
            Some(Host::Ipv4(ip)) => vec![SocketAddr::new(IpAddr::V4(ip), port)],
            Some(Host::Ipv6(ip)) => vec![SocketAddr::new(IpAddr::V6(ip), port)],
            Some(Host::Domain(domain)) => (domain, port)
                .to_socket_addrs()
                .map_err(|err| UrlError::Resolve {
                    url: url.to_string(),
                    host: host.clone(),
                    reason: err.to_string(),
                })?
                .collect(),
            None => Vec::new(),
        };
        let Some(first) = addrs.first().copied() else {
            return Err(UrlError::Resolve {
                url: url.to_string(),
                host,
                reason: "no address".to_owned(),
            });
        };
        if !self.allow_private {
            for addr in &addrs {
                if let Some(kind) = non_public(addr.ip()) {
                    return Err(UrlError::NotPublic {
                        url: url.to_string(),
                        host,
                        address: addr.ip(),
                        kind,
                    });
                }
            }
        }
        Ok(Target {
            url: url.clone(),
            addr: first,
        })
    }
}

/// A bot URL that parsed: http, https, ws or wss, with a host and no
/// credentials; its fragment is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotUrl {
    url: Url,
}

impl BotUrl {
    /// Reads a bot URL.
    ///
    /// # Errors
    ///
    /// [`UrlError::Syntax`], [`UrlError::TooLong`], [`UrlError::Scheme`],
    /// [`UrlError::Credentials`], or [`UrlError::Resolve`] for a URL
    /// without a host.
    pub fn parse(text: &str) -> Result<BotUrl, UrlError> {
        let text = text.trim();
        if text.len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong(text.len()));
        }
        let mut url = Url::parse(text).map_err(|err| UrlError::Syntax {
            url: text.chars().take(200).collect(),
            reason: err.to_string(),
        })?;
        if !matches!(url.scheme(), "http" | "https" | "ws" | "wss") {
            return Err(UrlError::Scheme {
                url: url.to_string(),
                scheme: url.scheme().to_owned(),
            });
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(UrlError::Credentials(format!(
                "{}://{}",
                url.scheme(),
                url.host_str().unwrap_or("")
            )));
        }
        if url.host().is_none() {
            return Err(UrlError::Resolve {
                url: url.to_string(),
                host: String::new(),
                reason: "the URL has no host".to_owned(),
            });
        }
        url.set_fragment(None);
        Ok(BotUrl { url })
    }

    /// The transport its scheme names.
    #[must_use]
    pub fn transport(&self) -> Transport {
        match self.url.scheme() {
            "ws" | "wss" => Transport::WebSocket,
            _ => Transport::Http,
        }
    }

    /// Whether it is `https` or `wss`.
    #[must_use]
    pub fn is_tls(&self) -> bool {
        matches!(self.url.scheme(), "https" | "wss")
    }

    /// The URL.
    #[must_use]
    pub fn as_url(&self) -> &Url {
        &self.url
    }

    /// Its port, explicit or the scheme's default.
    #[must_use]
    pub fn port(&self) -> u16 {
        self.url
            .port_or_known_default()
            .unwrap_or(if self.is_tls() { 443 } else { 80 })
    }

    /// Its host as written in the URL (brackets around IPv6).
    #[must_use]
    pub fn host_text(&self) -> String {
        self.url.host_str().unwrap_or_default().to_owned()
    }
}

impl fmt::Display for BotUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.url.fmt(f)
    }
}

impl std::str::FromStr for BotUrl {
    type Err = UrlError;

    fn from_str(text: &str) -> Result<BotUrl, UrlError> {
        BotUrl::parse(text)
    }
}

/// A bot URL and the one address connections to it go to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The URL (its host is still sent as `Host` and used for TLS).
    pub url: BotUrl,
    /// The address checked against the policy; the only one connected to.
    pub addr: SocketAddr,
}

/// What kind of non-public address `ip` is, or `None` for a public
/// unicast address.
#[must_use]
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(ip) => non_public_v4(ip),
        IpAddr::V6(ip) => non_public_v6(ip),
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    let kind = if a == 0 {
        "an unspecified address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if ip.is_private() {
        "a private address"
    } else if ip.is_link_local() {
        "a link-local address"
    } else if a == 100 && (64..128).contains(&b) {
        "a shared (carrier-grade NAT) address"
    } else if ip.is_multicast() {
        "a multicast address"
    } else if ip.is_broadcast() || a >= 240 || (a == 192 && b == 0 && c == 0) || (a == 198 && (b == 18 || b == 19)) {
        "a reserved address"
    } else if ip.is_documentation() {
        "a documentation address"
    } else {
        return None;
    };
    Some(kind)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return non_public_v4(v4).or(Some("an IPv4-mapped IPv6 address"));
    }
    let segments = ip.segments();
    let embedded_v4 = || Ipv4Addr::from(((u32::from(segments[6])) << 16) | u32::from(segments[7]));
    let kind = if ip.is_unspecified() {
        "an unspecified address"
    } else if ip.is_loopback() {
        "a loopback address"
    } else if segments[..6] == [0; 6] {
        // IPv4-compatible (::a.b.c.d, deprecated): treated as the IPv4 address.
        return non_public_v4(embedded_v4()).or(Some("an IPv4-compatible IPv6 address"));
    } else if segments[0] == 0x64 && segments[1] == 0xff9b {
        // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48).
        return non_public_v4(embedded_v4()).or(if segments[2] == 1 {
            Some("a local-use NAT64 address")
        } else {
            None
        });
    } else if ip.is_multicast() {
        "a multicast address"
    } else if ip.is_unique_local() {
        "a private (unique local) address"
    } else if ip.is_unicast_link_local() || (segments[0] & 0xffc0) == 0xfec0 {
        "a link-local address"
    } else if segments[0] == 0x2001 && segments[1] == 0x0db8 {
        "a documentation address"
    } else if segments[0] == 0x2002 {
        // 6to4 carries an IPv4 address in its next 32 bits.
        let v4 = Ipv4Addr::from((u32::from(segments[1]) << 16) | u32::from(segments[2]));
        return non_public_v4(v4);
    } else if segments[0] == 0x2001 && segments[1] == 0 {
        "a Teredo address"
    } else if segments[..4] == [0x100, 0, 0, 0] {
        "a discard-only address"
    } else {
        return None;
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(url: &str) -> UrlError {
        let url = BotUrl::parse(url).expect("parses");
        AddressPolicy::PUBLIC_ONLY.resolve(&url).expect_err("refused")
    }

    #[test]
    fn non_public_addresses_are_refused() {
        for url in [
            "http://127.0.0.1/",
            "http://127.1.2.3:8080/bot",
            "http://[::1]/",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:10.0.0.1]/",
            "http://[::127.0.0.1]/",
            "http://[64:ff9b::a00:1]/",
            "http://[2002:7f00:1::]/",
            "http://0.0.0.0/",
            "http://[::]/",
            "http://100.64.0.1/",
            "http://224.0.0.1/",
            "http://255.255.255.255/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[ff02::1]/",
            "ws://localhost:9000/",
        ] {
            assert!(
                matches!(refused(url), UrlError::NotPublic { .. }),
                "{url} should be refused as not public"
            );
        }
    }

    #[test]
    fn the_refusal_says_what_the_address_is() {
        let message = refused("http://169.254.169.254/").to_string();
        assert!(message.contains("link-local"), "{message}");
        assert!(message.contains("--allow-private-bot-urls"), "{message}");
        let message = refused("http://[::ffff:127.0.0.1]/").to_string();
        assert!(message.contains("loopback"), "{message}");
    }

    #[test]
    fn public_addresses_pass_and_are_pinned() {
        for (url, addr) in [
            ("http://93.184.215.14/", "93.184.215.14:80"),
            ("https://8.8.8.8/bot", "8.8.8.8:443"),
            ("ws://[2606:4700::1111]:9000/", "[2606:4700::1111]:9000"),
            ("wss://1.1.1.1/", "1.1.1.1:443"),
        ] {
            let target = AddressPolicy::PUBLIC_ONLY
                .resolve(&BotUrl::parse(url).expect("parses"))
                .expect("public");
            assert_eq!(target.addr.to_string(), addr);
        }
    }

    #[test]
    fn the_flag_allows_private_addresses() {
        let url = BotUrl::parse("http://127.0.0.1:8000/").expect("parses");
        let target = AddressPolicy::ANY.resolve(&url).expect("allowed");
        assert_eq!(target.addr.to_string(), "127.0.0.1:8000");
    }

    #[test]
    fn bad_urls_are_refused_with_a_reason() {
        assert!(matches!(BotUrl::parse("ftp://x.org/"), Err(UrlError::Scheme { .. })));
        assert!(matches!(
            BotUrl::parse("file:///etc/passwd"),
            Err(UrlError::Scheme { .. })
        ));
        assert!(matches!(BotUrl::parse("not a url"), Err(UrlError::Syntax { .. })));
        assert!(matches!(
            BotUrl::parse("http://user:pw@example.org/"),
            Err(UrlError::Credentials(_))
        ));
        let long = format!("http://example.org/{}", "a".repeat(MAX_URL_BYTES));
        assert!(matches!(BotUrl::parse(&long), Err(UrlError::TooLong(_))));
        let message = BotUrl::parse("http://user:secret@example.org/")
            .expect_err("refused")
            .to_string();
        assert!(!message.contains("secret"), "{message}");
    }

    #[test]
    fn transports_follow_the_scheme() {
        let transport = |url: &str| BotUrl::parse(url).expect("parses").transport();
        assert_eq!(transport("http://x.org/"), Transport::Http);
        assert_eq!(transport("https://x.org/"), Transport::Http);
        assert_eq!(transport("ws://x.org/"), Transport::WebSocket);
        assert_eq!(transport("wss://x.org/"), Transport::WebSocket);
    }
}
