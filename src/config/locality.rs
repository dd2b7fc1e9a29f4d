//! `[privacy] local_only`: whether a provider's base URL is on this machine or a private network,
//! decided before any byte is sent.
//!
//! The host is resolved once, here; every address must be local, and the provider's HTTP client
//! is then pinned to exactly those addresses (`llm::ProviderSettings::pinned`), so a DNS
//! answer that changes later (DNS rebinding) cannot send a request elsewhere.

use std::net::{IpAddr, SocketAddr};

/// A host and the local addresses it resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedHost {
    pub host: String,
    pub addresses: Vec<SocketAddr>,
}

/// Why a base URL is not known to be local.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalityError {
    #[error("`{url}` is not a URL with a host")]
    NoHost { url: String },
    #[error("{host} cannot be looked up ({reason}), so it cannot be shown to be local")]
    Unresolved { host: String, reason: String },
    #[error("{host} is not on this machine or a private network (it is {address})")]
    Remote { host: String, address: IpAddr },
}

/// The host of `base_url` and its addresses, when every one of them is local.
pub fn local_host(base_url: &str) -> Result<PinnedHost, LocalityError> {
    let no_host = || LocalityError::NoHost {
        url: base_url.to_string(),
    };
    let url = reqwest::Url::parse(base_url).map_err(|_| no_host())?;
    let host = url.host_str().ok_or_else(no_host)?.to_string();
    let port = url.port_or_known_default().ok_or_else(no_host)?;
    // `[::1]` in a URL is the address ::1.
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => resolve(bare)
            .map_err(|reason| LocalityError::Unresolved {
                host: host.clone(),
                reason,
            })?
            .into_iter()
            .map(|ip| SocketAddr::new(ip, port))
            .collect(),
    };
    if addresses.is_empty() {
        return Err(LocalityError::Unresolved {
            host,
            reason: "no addresses".into(),
        });
    }
    if let Some(remote) = addresses.iter().find(|a| !is_local(a.ip())) {
        return Err(LocalityError::Remote {
            host,
            address: remote.ip(),
        });
    }
    Ok(PinnedHost { host, addresses })
}

/// Every address of `host`, from the hosts file and the DNS servers of `/etc/resolv.conf` — the
/// resolver reqwest itself uses (docs/decisions.md §29), so the check and the connection agree.
/// It runs on a thread of its own with its own small runtime, so it can be called from plain code
/// and from inside the async runtime alike.
fn resolve(host: &str) -> Result<Vec<IpAddr>, String> {
    use hickory_resolver::TokioResolver;
    use hickory_resolver::config::LookupIpStrategy;
    let host = host.to_string();
    let lookup = move || -> Result<Vec<IpAddr>, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        runtime.block_on(async {
            let mut builder = TokioResolver::builder_tokio().map_err(|e| e.to_string())?;
            builder.options_mut().ip_strategy = LookupIpStrategy::Ipv6AndIpv4;
            let resolver = builder.build().map_err(|e| e.to_string())?;
            let found = resolver.lookup_ip(host.as_str()).await.map_err(|e| {
                // The resolver's own text quotes its whole query; the person needs the gist.
                let text = e.to_string();
                if text.contains("no records found") {
                    "no address was found for it".to_string()
                } else {
                    text
                }
            })?;
            Ok(found.iter().collect())
        })
    };
    std::thread::spawn(lookup)
        .join()
        .map_err(|_| "the name lookup failed unexpectedly".to_string())?
}

/// Loopback, or a private, link-local or carrier-grade NAT range (the last is where Tailscale
/// and similar overlay networks put a person's own machines).
pub fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_local(IpAddr::V4(v4)),
            None => {
                let first = v6.segments()[0];
                v6.is_loopback()
                    // fc00::/7 unique local, fe80::/10 link-local.
                    || (first & 0xfe00) == 0xfc00
                    || (first & 0xffc0) == 0xfe80
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_private_addresses_are_local_and_public_ones_are_not() {
        for local in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.9",
            "172.31.255.1",
            "192.168.1.20",
            "169.254.3.4",
            "100.101.102.103",
            "::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:192.168.0.2",
        ] {
            assert!(is_local(local.parse().unwrap()), "{local}");
        }
        for remote in [
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "160.79.104.10",
            "2606:4700::1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_local(remote.parse().unwrap()), "{remote}");
        }
    }

    #[test]
    fn a_base_url_is_local_only_when_every_address_is() {
        let pinned = local_host("http://127.0.0.1:8080/v1").unwrap();
        assert_eq!(pinned.addresses, ["127.0.0.1:8080".parse().unwrap()]);
        let pinned = local_host("http://[::1]:11434/v1").unwrap();
        assert_eq!(pinned.addresses, ["[::1]:11434".parse().unwrap()]);
        let pinned = local_host("http://localhost:11434/v1").unwrap();
        assert!(pinned.addresses.iter().all(|a| a.ip().is_loopback()));
        assert_eq!(pinned.host, "localhost");
        assert_eq!(
            local_host("https://8.8.8.8/v1").unwrap_err().to_string(),
            "8.8.8.8 is not on this machine or a private network (it is 8.8.8.8)"
        );
        assert!(matches!(
            local_host("not a url"),
            Err(LocalityError::NoHost { .. })
        ));
    }
}
