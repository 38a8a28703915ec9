//! Selecting keys by pattern (`latency/cpu*/level/memory`), as references and `history
//! --select` write them.

use super::Key;

/// Whether `key` matches `select`, where `*` stands for any text within one `/` part.
pub fn selects(select: &str, key: &Key) -> bool {
    let text = key.to_string();
    let (s, k): (Vec<&str>, Vec<&str>) = (select.split('/').collect(), text.split('/').collect());
    s.len() == k.len() && s.iter().zip(&k).all(|(p, t)| glob(p, t))
}

fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|i| rest.is_char_boundary(*i))
                .any(|i| glob(tail, &rest[i..]))
        }
    }
}
