//! The environment switches git reads as booleans.

/// git's `git_env_bool(name, 0)`: whether the environment variable `name` is true (`true`,
/// `yes`, `on` or a non-zero number); false when unset or anything else (git would die on a
/// value that is no boolean; the switches read this way are test and escape hatches).
pub(crate) fn git_env_bool(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        let v = v.to_ascii_lowercase();
        matches!(v.as_str(), "true" | "yes" | "on") || v.parse::<i64>().is_ok_and(|n| n != 0)
    })
}
