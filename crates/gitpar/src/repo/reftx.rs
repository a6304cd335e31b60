//! git's ref transactions as the `reference-transaction` hook sees them (`refs.c`,
//! `run_transaction_hook`): every ref git-par moves goes through [`transaction`] (or
//! [`deletion`]), which runs the hook with `prepared` before anything moves, then `committed`,
//! or `aborted` when the hook refuses in `prepared` or the update fails.
//!
//! The lines are the ones git 2.47 writes, `<old> SP <new> SP <ref-name> LF`: the old value only
//! where git's caller passed an expected one (else the null id), a symbolic ref's target as
//! `ref:<target>`. Which updates a command passes, and in which transactions, follow git's
//! callers (`update_refs_for_switch`, `create_branch`, `reset_refs`, `remove_branch_state`) and
//! the files backend, which adds the `HEAD` log-only update when the branch `HEAD` is on moves.

use gix::ObjectId;

use crate::repo::hooks::{reference_transaction, Env};

/// One side of an update.
#[derive(Debug, Clone)]
pub enum Value {
    /// No value: the ref is created or deleted, or git's caller gave no expected old value.
    Null,
    /// An object id.
    Id(ObjectId),
    /// A symbolic ref's target, a full ref name (`ref:refs/heads/main`).
    Symbolic(String),
}

/// One ref update of a transaction, as the hook receives it.
#[derive(Debug, Clone)]
pub struct Update {
    /// The expected old value (git's `REF_HAVE_OLD`), or [`Value::Null`].
    pub old: Value,
    /// The new value ([`Value::Null`] for a deletion).
    pub new: Value,
    /// The full ref name (`HEAD`, `refs/heads/x`, `ORIG_HEAD`).
    pub name: String,
}

impl Update {
    /// An update of `name` to `new`, without an expected old value.
    pub fn to(name: impl Into<String>, new: Value) -> Update {
        Update {
            old: Value::Null,
            new,
            name: name.into(),
        }
    }
}

/// Why a transaction did not commit.
#[derive(Debug, thiserror::Error)]
pub enum Error<E> {
    /// The `reference-transaction` hook refused in `prepared`: nothing moved. git dies with
    /// `fatal: ref updates aborted by hook` (128).
    #[error("ref updates aborted by hook")]
    AbortedByHook,
    /// Moving the refs failed (the hook then saw `aborted`).
    #[error(transparent)]
    Apply(E),
}

/// A transaction whose moves cannot fail on their own: only the hook can stop it.
pub type Aborted = Error<std::convert::Infallible>;

/// The hook's standard input for `updates`.
fn lines(repo: &gix::Repository, updates: &[Update]) -> Vec<u8> {
    let null = repo.object_hash().null();
    let show = |v: &Value| match v {
        Value::Null => null.to_string(),
        Value::Id(id) => id.to_string(),
        Value::Symbolic(target) => format!("ref:{target}"),
    };
    updates
        .iter()
        .map(|u| format!("{} {} {}\n", show(&u.old), show(&u.new), u.name))
        .collect::<String>()
        .into_bytes()
}

/// Run `apply`, which moves the refs of `updates`, as one of git's ref transactions: the hook's
/// `prepared` first (a non-zero exit aborts: `aborted`, then [`Error::AbortedByHook`] with
/// nothing moved), then `apply`, then `committed` (or `aborted` if `apply` failed). With no
/// updates, `apply` just runs.
pub fn transaction<T, E>(
    repo: &gix::Repository,
    env: Env<'_>,
    updates: &[Update],
    apply: impl FnOnce() -> Result<T, E>,
) -> Result<T, Error<E>> {
    if updates.is_empty() {
        return apply().map_err(Error::Apply);
    }
    let input = lines(repo, updates);
    let hook = |state: &str| reference_transaction(repo, env.launch, state, &input, env.sink);
    if hook("prepared") != 0 {
        hook("aborted");
        return Err(Error::AbortedByHook);
    }
    match apply() {
        Ok(value) => {
            hook("committed");
            Ok(value)
        }
        Err(err) => {
            hook("aborted");
            Err(Error::Apply(err))
        }
    }
}

/// Delete the ref `name` with `delete` as git's `refs_delete_ref(…, old, …)` does with the
/// files backend: its packed-refs side (the deletion without an old value) is begun and
/// dropped (`aborted`) before the loose transaction runs (`prepared`, `committed`), whether or
/// not the ref exists. A hook refusing in `prepared` is [`Error::AbortedByHook`] (git dies).
pub fn deletion<T>(
    repo: &gix::Repository,
    env: Env<'_>,
    name: &str,
    old: Value,
    delete: impl FnOnce() -> T,
) -> Result<T, Aborted> {
    let packed = lines(repo, &[Update::to(name, Value::Null)]);
    reference_transaction(repo, env.launch, "aborted", &packed, env.sink);
    let updates = [Update {
        old,
        new: Value::Null,
        name: name.to_owned(),
    }];
    transaction(repo, env, &updates, || Ok(delete()))
}
