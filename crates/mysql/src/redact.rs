//! Keeping the password out of everything displayed: URLs and the
//! driver's options.

use std::fmt;
use std::ops::Deref;

use mysql::Opts;

/// Replaces every password in a URL by `***`: the user info's
/// (`scheme://user:password@host/...`) and the query's (`?password=...`,
/// also `pass` and `pwd`, any case).
///
/// # Examples
///
/// ```
/// assert_eq!(
///     ringpipe_mysql::redact_url("mysql://u:s3cret@h:3306/db"),
///     "mysql://u:***@h:3306/db"
/// );
/// assert_eq!(
///     ringpipe_mysql::redact_url("mysql://u@h/db?password=s3cret&prefer_socket=false"),
///     "mysql://u@h/db?password=***&prefer_socket=false"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    let scheme_end = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[scheme_end..];
    let authority_end = scheme_end + rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = url[scheme_end..].split_at(authority_end - scheme_end);
    let (path, query) = tail.split_at(tail.find('?').unwrap_or(tail.len()));
    format!(
        "{}{}{path}{}",
        &url[..scheme_end],
        redact_user_info(authority),
        redact_query(query)
    )
}

/// The password of `user:password@host:port` replaced by `***`.
fn redact_user_info(authority: &str) -> String {
    // The last '@' ends the user info: a password may itself contain '@'.
    let Some(at) = authority.rfind('@') else {
        return authority.to_owned();
    };
    match authority[..at].find(':') {
        Some(colon) => format!("{}:***{}", &authority[..colon], &authority[at..]),
        None => authority.to_owned(),
    }
}

/// A query string (`?a=b&c=d`, or empty) with the values of password
/// parameters replaced by `***`.
fn redact_query(query: &str) -> String {
    let Some(params) = query.strip_prefix('?') else {
        return query.to_owned();
    };
    let redacted: Vec<String> = params
        .split('&')
        .map(|param| match param.split_once('=') {
            Some((key, _)) if is_password_key(key) => format!("{key}=***"),
            _ => param.to_owned(),
        })
        .collect();
    format!("?{}", redacted.join("&"))
}

/// Whether a query parameter named `key` holds a password.
fn is_password_key(key: &str) -> bool {
    ["password", "pass", "pwd"]
        .iter()
        .any(|k| key.eq_ignore_ascii_case(k))
}

/// The driver's options, whose `Debug` would print the password: shown
/// with it replaced by `***`.
#[derive(Clone)]
pub(crate) struct SecretOpts(pub(crate) Opts);

impl Deref for SecretOpts {
    type Target = Opts;

    fn deref(&self) -> &Opts {
        &self.0
    }
}

impl fmt::Debug for SecretOpts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opts")
            .field("user", &self.0.get_user())
            .field("pass", &self.0.get_pass().map(|_| "***"))
            .field("host", &self.0.get_ip_or_hostname())
            .field("port", &self.0.get_tcp_port())
            .field("db", &self.0.get_db_name())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SinkConfig;

    #[test]
    fn redaction_hides_only_the_password() {
        assert_eq!(redact_url("mysql://u:p@h/db"), "mysql://u:***@h/db");
        assert_eq!(
            redact_url("mysql://u:p@ss@h/db?x=1"),
            "mysql://u:***@h/db?x=1"
        );
        assert_eq!(redact_url("mysql://u@h/db"), "mysql://u@h/db");
        assert_eq!(redact_url("mysql://h:3306/db"), "mysql://h:3306/db");
        assert_eq!(
            redact_url("mysql://u@h/db?PASSWORD=p&x=1&pass=q&pwd=r&passage=s"),
            "mysql://u@h/db?PASSWORD=***&x=1&pass=***&pwd=***&passage=s"
        );
        assert_eq!(
            redact_url("mysql://u:a@h?password=c#f"),
            "mysql://u:***@h?password=***"
        );
    }

    #[test]
    fn the_drivers_options_are_shown_without_the_password() {
        let opts = SinkConfig::new("mysql://u@h/db?password=hunter2", "t", &["a"])
            .opts()
            .unwrap();
        assert_eq!(opts.get_pass(), Some("hunter2"));
        let shown = format!("{:?}", SecretOpts(opts));
        assert!(
            !shown.contains("hunter2") && shown.contains("***"),
            "{shown}"
        );
    }
}
