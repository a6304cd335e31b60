//! Configuration passed down by `git -c name=value par ...`.
//!
//! Git runs `git-par` with the `-c` values in `GIT_CONFIG_PARAMETERS`, a list of shell-quoted
//! words (`'name'='value'`, or the older `'name=value'`). gix reads `GIT_CONFIG_COUNT` but not this
//! variable, so the binary turns it into overrides itself.

/// The overrides in `GIT_CONFIG_PARAMETERS`, as `name=value` strings, in order.
pub fn from_git_config_parameters() -> Vec<String> {
    std::env::var("GIT_CONFIG_PARAMETERS")
        .map(|v| parse(&v))
        .unwrap_or_default()
}

/// Make the `-c name=value` options given to git-par itself visible to the processes it starts
/// (hooks, `git stash store`), as git's own `-c` is: appended to `GIT_CONFIG_PARAMETERS` as
/// `'name'='value'` (`'name'` alone for a value-less entry).
pub fn export(options: &[String]) {
    if options.is_empty() {
        return;
    }
    let mut value = std::env::var("GIT_CONFIG_PARAMETERS").unwrap_or_default();
    for option in options {
        if !value.is_empty() {
            value.push(' ');
        }
        match option.split_once('=') {
            Some((name, v)) => {
                value.push_str(&sq_quote(name));
                value.push('=');
                value.push_str(&sq_quote(v));
            }
            None => value.push_str(&sq_quote(option)),
        }
    }
    std::env::set_var("GIT_CONFIG_PARAMETERS", value);
}

/// git's `sq_quote_buf`: single quotes around, `'` and `!` escaped.
fn sq_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''").replace('!', "'\\!'"))
}

/// Parse the variable's value. Quoting is git's `sq_quote`: a word is enclosed in single quotes
/// and a literal quote is written `'\''`. A `name` word directly followed by `=` and a quoted
/// value is joined with it.
pub fn parse(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = value.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        if chars.peek().is_none() {
            break;
        }
        let mut word = String::new();
        // A word is a sequence of quoted parts, `\x` escapes and one optional `=` joining a key
        // to its value.
        while let Some(&c) = chars.peek() {
            match c {
                '\'' => {
                    chars.next();
                    for c in chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                        word.push(c);
                    }
                }
                '\\' => {
                    chars.next();
                    if let Some(c) = chars.next() {
                        word.push(c);
                    }
                }
                c if c.is_whitespace() => break,
                c => {
                    word.push(c);
                    chars.next();
                }
            }
        }
        out.push(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn parses_new_and_old_styles_and_escaped_quotes() {
        assert_eq!(
            parse("'checkout.workers'='4' 'core.symlinks=false'"),
            vec!["checkout.workers=4", "core.symlinks=false"]
        );
        assert_eq!(parse("'a.b'='it'\\''s'"), vec!["a.b=it's"]);
        assert!(parse("").is_empty());
    }

    #[test]
    fn exported_words_parse_back() {
        let word = format!("{}={}", super::sq_quote("a.b"), super::sq_quote("it's!"));
        assert_eq!(parse(&word), vec!["a.b=it's!"]);
    }
}
