//! `money` as the session spells it: decimal places and digit group
//! separators the server would round or skip.

/// The one character of `text`, if it has exactly one.
pub(super) fn single_char(text: &str) -> Option<char> {
    let mut chars = text.chars();
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

/// A `money` value in a session that keeps `digits` decimal places after
/// `point` and skips `separator`: no nonzero digit beyond those places
/// (the server rounds at the first one dropped), no separator after the
/// point, and separators only between groups of digits (three last, two
/// or three before, as in `1,234,567` or `12,34,567`): the server skips
/// one anywhere, reading `12,34` as 1234.
pub(super) fn money(text: &str, digits: usize, point: char, separator: char) -> Result<(), String> {
    let Some(first) = text.find(|c: char| c.is_ascii_digit()) else {
        return Ok(());
    };
    let start = match text[..first].ends_with(point) {
        true => first - point.len_utf8(),
        false => first,
    };
    let end = text[start..]
        .find(|c: char| !(c.is_ascii_digit() || c == point || c == separator))
        .map_or(text.len(), |n| start + n);
    let amount = text[start..end].trim_end_matches(separator);
    let (whole, fraction) = amount.split_once(point).unwrap_or((amount, ""));
    if fraction.contains(point) {
        // A second point: the server's to refuse.
        return Ok(());
    }
    if fraction.contains(separator) {
        return Err(format!(
            "{text:?} has a {separator:?} after the decimal point, which the server skips"
        ));
    }
    if fraction.bytes().skip(digits).any(|b| b != b'0') {
        return Err(format!(
            "{text:?} has more decimal places than money's {digits}: it would be rounded"
        ));
    }
    let groups: Vec<&str> = whole.split(separator).collect();
    let last = groups.len() - 1;
    let grouped = groups.iter().enumerate().all(|(i, group)| match i {
        0 => (1..=3).contains(&group.len()),
        _ if i == last => group.len() == 3,
        _ => (2..=3).contains(&group.len()),
    });
    match last == 0 || grouped {
        true => Ok(()),
        false => Err(format!(
            "{text:?} has a {separator:?} that does not separate groups of digits: the server \
             skips it, reading {}",
            groups.concat()
        )),
    }
}
