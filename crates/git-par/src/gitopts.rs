//! Reading a command line that git-par hands to git (`clone`, `worktree add`) the way git's
//! `parse-options.c` reads it, just far enough to know what git-par must do once git is done:
//! the positional arguments (the destination directory, the new work tree) and a few options
//! (`--no-checkout`, `--bare`, `-q`, ...); and `worktree remove`'s few options, which git-par runs
//! itself (what it cannot read goes to git whole).
//!
//! Why not clap: git accepts every spelling parse-options accepts (`--opt=v` and `--opt v`,
//! `-bNAME`, bundled `-qn`, unique abbreviations such as `--no-check`, negations such as
//! `--checkout` for `--no-checkout`, options after positionals, `--end-of-options`), and the
//! arguments go to git unchanged, so git-par must read them as git does, not reject or
//! re-spell them. What git-par reads here only matters after git accepted the same arguments;
//! anything it cannot read (an unknown option, a missing value) is left for git to refuse.

use std::ffi::{OsStr, OsString};
use std::ops::Range;

/// How many values an option takes, as parse-options declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arity {
    /// A flag (`OPT_BOOL`, `OPT__QUIET`, ...): no value.
    Flag,
    /// A required value: `--opt=v`, `--opt v`, `-ov`, `-o v`.
    Value,
    /// An optional value, only attached: `--opt` or `--opt=v` (`PARSE_OPT_OPTARG`).
    Optional,
}

/// One option of a git command.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Spec {
    /// The name the caller asks for (an alias such as `--recursive` names its target).
    pub name: &'static str,
    /// The long spelling, if the option has one (`-b` of `worktree add` has none).
    pub long: Option<&'static str>,
    /// The one-letter spelling, if any.
    pub short: Option<char>,
    /// Its values.
    pub arity: Arity,
}

/// A long option named `name` (and spelled so).
pub(crate) const fn long(name: &'static str, arity: Arity) -> Spec {
    Spec {
        name,
        long: Some(name),
        short: None,
        arity,
    }
}

/// An option with a long and a short spelling.
pub(crate) const fn both(name: &'static str, short: char, arity: Arity) -> Spec {
    Spec {
        name,
        long: Some(name),
        short: Some(short),
        arity,
    }
}

/// An option with only a short spelling, known as `name`.
pub(crate) const fn short(name: &'static str, short: char, arity: Arity) -> Spec {
    Spec {
        name,
        long: None,
        short: Some(short),
        arity,
    }
}

/// A second long spelling (`OPT_ALIAS`, hidden options) of the option `name`.
pub(crate) const fn alias(spelling: &'static str, name: &'static str, arity: Arity) -> Spec {
    Spec {
        name,
        long: Some(spelling),
        short: None,
        arity,
    }
}

/// One option as given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Given {
    /// The option's [`Spec::name`].
    pub name: &'static str,
    /// `--no-<name>` (or `--<name>` of a `no-` option).
    pub negated: bool,
    /// Its value, if it took one.
    pub value: Option<OsString>,
    /// Where it was: the index of its argument, ...
    pub arg: usize,
    /// ... the byte of that argument where its letter is, for a short option (1 when the option
    /// begins the argument; a later letter of a bundle such as `-qj4` is further in) ...
    pub offset: usize,
    /// ... and whether its value was the next argument.
    pub separate_value: bool,
}

/// A command line read as git reads it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Parsed {
    /// The options, in order.
    pub options: Vec<Given>,
    /// The positional arguments, in order.
    pub positionals: Vec<OsString>,
    /// The index of `--` or `--end-of-options`, when one ended the options.
    pub end_of_options: Option<usize>,
    /// Something git will refuse: an unknown option, a missing value, a value given to a flag.
    pub unreadable: bool,
    /// `-h` or `--help` was given.
    pub help: bool,
}

impl Parsed {
    /// The last value of `name` (`None` when not given or negated last).
    pub(crate) fn value(&self, name: &str) -> Option<&OsStr> {
        self.options
            .iter()
            .rev()
            .find(|o| o.name == name)
            .and_then(|o| o.value.as_deref())
    }

    /// Every value of `name` since it was last negated (`OPT_STRING_LIST`).
    pub(crate) fn values(&self, name: &str) -> Vec<&OsStr> {
        let mut out = Vec::new();
        for o in self.options.iter().filter(|o| o.name == name) {
            if o.negated {
                out.clear();
            } else if let Some(v) = &o.value {
                out.push(v.as_os_str());
            }
        }
        out
    }

    /// The last word on flag `name`: `Some(true)` given, `Some(false)` negated, `None` neither.
    pub(crate) fn flag(&self, name: &str) -> Option<bool> {
        self.options
            .iter()
            .rev()
            .find(|o| o.name == name)
            .map(|o| !o.negated)
    }

    /// How often `name` was given since it was last negated: git's `OPT__FORCE` and
    /// `OPT_COUNTUP` (`-ff` is two, `--no-force` counts again from 0).
    pub(crate) fn count(&self, name: &str) -> usize {
        self.options
            .iter()
            .filter(|o| o.name == name)
            .fold(0, |n, o| if o.negated { 0 } else { n + 1 })
    }

    /// git's `OPT__VERBOSITY` (`-v`/`--verbose` up, `-q`/`--quiet` down, a negation resets):
    /// below zero is quiet.
    pub(crate) fn verbosity(&self) -> i32 {
        let mut v = 0;
        for o in &self.options {
            match (o.name, o.negated) {
                ("verbose" | "quiet", true) => v = 0,
                ("verbose", false) => v = if v >= 0 { v + 1 } else { 1 },
                ("quiet", false) => v = if v <= 0 { v - 1 } else { -1 },
                _ => {}
            }
        }
        v
    }

    /// The arguments without the options named `name` (git-par's own, which git would refuse):
    /// a bundled letter is cut from its argument, a separate value goes with its option.
    pub(crate) fn without(&self, args: &[OsString], name: &str) -> Vec<OsString> {
        let mut out: Vec<Option<OsString>> = args.iter().cloned().map(Some).collect();
        for o in self.options.iter().filter(|o| o.name == name) {
            if o.offset > 1 {
                out[o.arg] = Some(cut(&args[o.arg], 0..o.offset));
            } else {
                out[o.arg] = None;
            }
            if o.separate_value {
                out[o.arg + 1] = None;
            }
        }
        out.into_iter().flatten().collect()
    }

    /// Where an option appended by git-par still counts as an option and comes after all of
    /// the user's (so that it wins): before `--`/`--end-of-options`, else at the end.
    pub(crate) fn append_at(&self, args: &[OsString]) -> usize {
        self.end_of_options.unwrap_or(args.len())
    }
}

/// Read `args` (the arguments after the subcommand) with the options `specs`.
pub(crate) fn parse(args: &[OsString], specs: &[Spec]) -> Parsed {
    let mut p = Parsed::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_encoded_bytes();
        if arg == b"--" || arg == b"--end-of-options" {
            p.end_of_options = Some(i);
            p.positionals.extend(args[i + 1..].iter().cloned());
            break;
        }
        if let Some(rest) = arg.strip_prefix(b"--") {
            i = parse_long(args, i, rest, specs, &mut p);
        } else if arg.len() > 1 && arg[0] == b'-' {
            i = parse_short(args, i, specs, &mut p);
        } else {
            p.positionals.push(args[i].clone());
            i += 1;
        }
    }
    p
}

/// The part `range` of the argument `arg`, where `range` starts and ends next to an ASCII
/// character of it (an option's letter, the `=` before a value) or at its ends: such a cut leaves
/// whole characters on every system, so the parts are `OsStr`s again, whatever their encoding.
fn cut(arg: &OsStr, range: Range<usize>) -> OsString {
    let bytes = &arg.as_encoded_bytes()[range];
    // SAFETY: `bytes` comes from `as_encoded_bytes` of `arg` on this platform, cut only next to
    // an ASCII character or at an end, which `from_encoded_bytes_unchecked` allows.
    unsafe { OsStr::from_encoded_bytes_unchecked(bytes) }.to_owned()
}

/// `--key[=value]` at `args[i]` (`rest` is what follows the `--`); returns the index of the next
/// argument.
fn parse_long(args: &[OsString], i: usize, rest: &[u8], specs: &[Spec], p: &mut Parsed) -> usize {
    let len = args[i].len();
    // Where an attached value starts in the argument: after the `=`.
    let (key, attached) = match rest.iter().position(|&b| b == b'=') {
        Some(eq) => (&rest[..eq], Some(len - rest.len() + eq + 1)),
        None => (rest, None),
    };
    if key == b"help" || key == b"help-all" {
        p.help = true;
        return i + 1;
    }
    let Some((spec, negated)) = resolve_long(key, specs) else {
        p.unreadable = true;
        return i + 1;
    };
    let mut given = Given {
        name: spec.name,
        negated,
        value: None,
        arg: i,
        offset: 0,
        separate_value: false,
    };
    let mut next = i + 1;
    match (spec.arity, negated, attached) {
        (_, true, Some(_)) | (Arity::Flag, false, Some(_)) => p.unreadable = true,
        (Arity::Value | Arity::Optional, false, Some(v)) => {
            given.value = Some(cut(&args[i], v..len));
        }
        (Arity::Value, false, None) => match args.get(i + 1) {
            Some(v) => {
                given.value = Some(v.clone());
                given.separate_value = true;
                next = i + 2;
            }
            None => p.unreadable = true,
        },
        _ => {}
    }
    p.options.push(given);
    next
}

/// Which option a long spelling names, as parse-options decides: an exact name, a negation
/// (`no-<name>`, or `<name>` without the `no-` of a `no-` option), else a unique abbreviation
/// of either.
fn resolve_long<'s>(key: &[u8], specs: &'s [Spec]) -> Option<(&'s Spec, bool)> {
    let spellings = || {
        specs
            .iter()
            .filter_map(|s| s.long.map(|l| (s, l)))
            .flat_map(|(s, l)| {
                let plain = (s, false, l.to_owned());
                let negated = (s, true, format!("no-{l}"));
                let positive = l.strip_prefix("no-").map(|r| (s, true, r.to_owned()));
                [Some(plain), Some(negated), positive].into_iter().flatten()
            })
    };
    if let Some((s, neg, _)) = spellings().find(|(_, _, w)| w.as_bytes() == key) {
        return Some((s, neg));
    }
    if key.is_empty() {
        return None;
    }
    let mut found: Option<(&'s Spec, bool)> = None;
    for (s, neg, _) in spellings().filter(|(_, _, w)| w.as_bytes().starts_with(key)) {
        match found {
            Some((f, fneg)) if f.name != s.name || fneg != neg => return None,
            _ => found = Some((s, neg)),
        }
    }
    found
}

/// A bundle of short options at `args[i]`; returns the index of the next argument.
fn parse_short(args: &[OsString], i: usize, specs: &[Spec], p: &mut Parsed) -> usize {
    let arg = args[i].as_encoded_bytes();
    let mut at = 1;
    while at < arg.len() {
        let letter = arg[at] as char;
        if letter == 'h' {
            p.help = true;
            return i + 1;
        }
        let Some(spec) = specs.iter().find(|s| s.short == Some(letter)) else {
            p.unreadable = true;
            return i + 1;
        };
        let mut given = Given {
            name: spec.name,
            negated: false,
            value: None,
            arg: i,
            offset: at,
            separate_value: false,
        };
        let rest = &arg[at + 1..];
        match spec.arity {
            Arity::Flag => {
                p.options.push(given);
                at += 1;
                continue;
            }
            Arity::Optional => {
                if !rest.is_empty() {
                    given.value = Some(cut(&args[i], at + 1..arg.len()));
                }
            }
            Arity::Value if !rest.is_empty() => {
                given.value = Some(cut(&args[i], at + 1..arg.len()));
            }
            Arity::Value => match args.get(i + 1) {
                Some(v) => {
                    given.value = Some(v.clone());
                    given.separate_value = true;
                    p.options.push(given);
                    return i + 2;
                }
                None => p.unreadable = true,
            },
        }
        p.options.push(given);
        return i + 1;
    }
    i + 1
}

/// The options of `git clone` (git 2.47's `builtin_clone_options`).
pub(crate) const CLONE: &[Spec] = &[
    both("verbose", 'v', Arity::Flag),
    both("quiet", 'q', Arity::Flag),
    long("progress", Arity::Flag),
    long("reject-shallow", Arity::Flag),
    both("no-checkout", 'n', Arity::Flag),
    long("bare", Arity::Flag),
    alias("naked", "bare", Arity::Flag),
    long("mirror", Arity::Flag),
    both("local", 'l', Arity::Flag),
    long("no-hardlinks", Arity::Flag),
    both("shared", 's', Arity::Flag),
    long("recurse-submodules", Arity::Optional),
    alias("recursive", "recurse-submodules", Arity::Optional),
    both("jobs", 'j', Arity::Value),
    long("template", Arity::Value),
    long("reference", Arity::Value),
    long("reference-if-able", Arity::Value),
    long("dissociate", Arity::Flag),
    both("origin", 'o', Arity::Value),
    both("branch", 'b', Arity::Value),
    both("upload-pack", 'u', Arity::Value),
    long("depth", Arity::Value),
    long("shallow-since", Arity::Value),
    long("shallow-exclude", Arity::Value),
    long("single-branch", Arity::Flag),
    long("no-tags", Arity::Flag),
    long("shallow-submodules", Arity::Flag),
    long("separate-git-dir", Arity::Value),
    long("ref-format", Arity::Value),
    both("config", 'c', Arity::Value),
    long("server-option", Arity::Value),
    both("ipv4", '4', Arity::Flag),
    both("ipv6", '6', Arity::Flag),
    long("filter", Arity::Value),
    long("also-filter-submodules", Arity::Flag),
    long("remote-submodules", Arity::Flag),
    long("sparse", Arity::Flag),
    long("bundle-uri", Arity::Value),
];

/// The options of `git worktree add` (git 2.47), and git-par's own `-j/--jobs`.
pub(crate) const WORKTREE_ADD: &[Spec] = &[
    both("force", 'f', Arity::Flag),
    short("b", 'b', Arity::Value),
    short("B", 'B', Arity::Value),
    long("orphan", Arity::Flag),
    both("detach", 'd', Arity::Flag),
    long("checkout", Arity::Flag),
    long("lock", Arity::Flag),
    long("reason", Arity::Value),
    both("quiet", 'q', Arity::Flag),
    long("track", Arity::Optional),
    long("guess-remote", Arity::Flag),
    both("jobs", 'j', Arity::Value),
    long("donor", Arity::Value),
    long("reflink", Arity::Flag),
];

/// The options of `git worktree remove` (git 2.47): `OPT__FORCE`, given twice for a locked
/// work tree.
pub(crate) const WORKTREE_REMOVE: &[Spec] = &[both("force", 'f', Arity::Flag)];

/// `git clean`'s options (git 2.47's `builtin/clean.c`).
pub(crate) const CLEAN: &[Spec] = &[
    both("quiet", 'q', Arity::Flag),
    both("dry-run", 'n', Arity::Flag),
    both("force", 'f', Arity::Flag),
    both("interactive", 'i', Arity::Flag),
    short("d", 'd', Arity::Flag),
    both("exclude", 'e', Arity::Value),
    short("x", 'x', Arity::Flag),
    short("X", 'X', Arity::Flag),
    long("pathspec-from-file", Arity::Value),
    long("pathspec-file-nul", Arity::Flag),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    fn clone(words: &[&str]) -> Parsed {
        parse(&args(words), CLONE)
    }

    #[test]
    fn positionals_among_options_and_values() {
        let p = clone(&["-b", "x", "src", "--depth=1", "-o", "up", "dst", "-qn"]);
        assert_eq!(p.positionals, args(&["src", "dst"]));
        assert_eq!(p.value("branch"), Some(OsStr::new("x")));
        assert_eq!(p.value("depth"), Some(OsStr::new("1")));
        assert_eq!(p.flag("no-checkout"), Some(true));
        assert!(p.verbosity() < 0);
        assert!(!p.unreadable);
    }

    #[test]
    fn attached_values_and_bundles() {
        let p = clone(&["-bmain", "-qj4", "-cfoo.bar=1", "src"]);
        assert_eq!(p.value("branch"), Some(OsStr::new("main")));
        assert_eq!(p.value("jobs"), Some(OsStr::new("4")));
        assert_eq!(p.values("config"), [OsStr::new("foo.bar=1")]);
        assert_eq!(p.positionals, args(&["src"]));
    }

    #[test]
    fn negations_and_abbreviations_as_git_reads_them() {
        assert_eq!(clone(&["--checkout"]).flag("no-checkout"), Some(false));
        assert_eq!(
            clone(&["-n", "--no-no-checkout"]).flag("no-checkout"),
            Some(false)
        );
        assert_eq!(clone(&["--no-check"]).flag("no-checkout"), Some(true));
        assert_eq!(clone(&["--mir"]).flag("mirror"), Some(true));
        assert_eq!(clone(&["--no-bare"]).flag("bare"), Some(false));
        assert_eq!(clone(&["--naked"]).flag("bare"), Some(true));
        // `--re` could be --reject-shallow, --recurse-submodules, --reference...: git refuses.
        assert!(clone(&["--re", "src"]).unreadable);
        assert_eq!(
            clone(&["--recursive"]).flag("recurse-submodules"),
            Some(true)
        );
    }

    #[test]
    fn end_of_options_and_help() {
        let p = clone(&["-q", "--", "-weird", "dst"]);
        assert_eq!(p.positionals, args(&["-weird", "dst"]));
        assert_eq!(p.end_of_options, Some(1));
        assert_eq!(p.append_at(&args(&["-q", "--", "-weird", "dst"])), 1);
        assert!(clone(&["--help"]).help);
        assert!(clone(&["-h"]).help);
        assert!(clone(&["-b"]).unreadable);
        assert!(clone(&["--bare=yes"]).unreadable);
    }

    #[test]
    fn optional_values_are_attached_only() {
        let p = clone(&["--recurse-submodules", "src"]);
        assert_eq!(p.positionals, args(&["src"]));
        assert_eq!(p.value("recurse-submodules"), None);
        let p = clone(&["--recurse-submodules=sub", "src"]);
        assert_eq!(p.values("recurse-submodules"), [OsStr::new("sub")]);
    }

    #[test]
    fn verbosity_as_opt_verbosity() {
        assert_eq!(clone(&["-q", "-q"]).verbosity(), -2);
        assert_eq!(clone(&["-q", "-v"]).verbosity(), 1);
        assert_eq!(clone(&["-q", "--no-quiet"]).verbosity(), 0);
    }

    #[test]
    fn git_pars_own_options_are_cut_out() {
        let words = args(&["-qj4", "-j", "2", "--jobs=3", "../wt", "-b", "x"]);
        let p = parse(&words, WORKTREE_ADD);
        assert_eq!(p.value("jobs"), Some(OsStr::new("3")));
        assert_eq!(p.without(&words, "jobs"), args(&["-q", "../wt", "-b", "x"]));
        assert_eq!(p.positionals, args(&["../wt"]));
        assert_eq!(p.value("b"), Some(OsStr::new("x")));
    }
}
