//! SQL string literals for the text protocol.
//!
//! How a literal must be escaped depends on the session: by default the
//! server treats backslash as an escape character; with `NO_BACKSLASH_ESCAPES`
//! in `sql_mode` a backslash is an ordinary character and only a doubled
//! quote escapes. Escaping for the wrong mode either corrupts data or opens
//! an injection, so the sink reads the mode per connection and passes it
//! here. Every escape replaces an ASCII byte, so UTF-8 stays valid.

/// Appends `value` as a quoted SQL string literal.
///
/// With `no_backslash_escapes == false` this escapes NUL, `\n`, `\r`, `\\`,
/// `'`, `"` and 0x1A like the server's own `mysql_real_escape_string`;
/// otherwise it only doubles `'`.
pub(crate) fn push_literal(out: &mut String, value: &str, no_backslash_escapes: bool) {
    out.push('\'');
    if no_backslash_escapes {
        push_doubling_quotes(out, value);
    } else {
        push_backslashed(out, value);
    }
    out.push('\'');
}

/// Appends `bytes` as a hexadecimal literal (`X'00FF'`): a binary string
/// whatever the connection's character set, so bytes that are not valid
/// text arrive unchanged.
pub(crate) fn push_hex_literal(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.reserve(bytes.len() * 2 + 3);
    out.push_str("X'");
    for &byte in bytes {
        out.push(char::from(DIGITS[usize::from(byte >> 4)]));
        out.push(char::from(DIGITS[usize::from(byte & 0xF)]));
    }
    out.push('\'');
}

/// Appends `value` with `'` doubled (for `NO_BACKSLASH_ESCAPES`).
fn push_doubling_quotes(out: &mut String, value: &str) {
    let mut rest = value;
    while let Some(at) = rest.find('\'') {
        out.push_str(&rest[..=at]);
        out.push('\'');
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// Appends `value` with the backslash escapes of the default mode.
fn push_backslashed(out: &mut String, value: &str) {
    let mut start = 0;
    for (at, byte) in value.bytes().enumerate() {
        let escape = match byte {
            0 => "\\0",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\\' => "\\\\",
            b'\'' => "\\'",
            b'"' => "\\\"",
            0x1a => "\\Z",
            _ => continue,
        };
        // `at` is an ASCII byte, so both slices end on char boundaries.
        out.push_str(&value[start..at]);
        out.push_str(escape);
        start = at + 1;
    }
    out.push_str(&value[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(value: &str, nbe: bool) -> String {
        let mut out = String::new();
        push_literal(&mut out, value, nbe);
        out
    }

    #[test]
    fn backslash_mode_escapes_every_special_byte() {
        assert_eq!(
            lit("a'b\"c\\d\0e\nf\rg\x1ah", false),
            "'a\\'b\\\"c\\\\d\\0e\\nf\\rg\\Zh'"
        );
    }

    #[test]
    fn no_backslash_mode_only_doubles_quotes() {
        assert_eq!(lit("it's \\ fine\n", true), "'it''s \\ fine\n'");
    }

    #[test]
    fn injection_attempt_stays_inside_the_literal() {
        assert_eq!(
            lit("'); DROP TABLE t; --", false),
            "'\\'); DROP TABLE t; --'"
        );
        assert_eq!(lit("'); DROP TABLE t; --", true), "'''); DROP TABLE t; --'");
    }

    #[test]
    fn multibyte_text_is_untouched() {
        assert_eq!(lit("café 😀 '", false), "'café 😀 \\''");
    }
}
