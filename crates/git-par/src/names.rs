//! How git names refs and objects for people: the full ref a short name stands for, and the
//! abbreviated id of an object.

/// The full name of the ref `name` stands for, as git's `dwim_ref` finds it: `main` is
/// `refs/heads/main`, `origin/x` `refs/remotes/origin/x`, and a symbolic ref is followed to the
/// ref it points to (`HEAD` is the branch it is on, or `HEAD` itself when detached). `None` if
/// there is no such ref, or it points to a branch yet to be born.
pub(crate) fn dwim_ref(repo: &gix::Repository, name: &str) -> Option<bstr::BString> {
    let mut r = repo.try_find_reference(name).ok().flatten()?;
    // git follows up to five levels of symbolic refs.
    for _ in 0..5 {
        let next = match r.target() {
            gix::refs::TargetRef::Object(_) => return Some(r.name().as_bstr().to_owned()),
            gix::refs::TargetRef::Symbolic(next) => next.to_owned(),
        };
        r = repo.try_find_reference(next.as_ref()).ok().flatten()?;
    }
    None
}

/// An abbreviated object id, as git prints it (7 hex digits, longer if ambiguous).
pub(crate) fn short(repo: &gix::Repository, id: gix::ObjectId) -> String {
    use gix::prelude::ObjectIdExt;
    id.attach(repo)
        .shorten()
        .map_or_else(|_| id.to_hex_with_len(7).to_string(), |p| p.to_string())
}
