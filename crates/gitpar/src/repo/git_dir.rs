//! Whether a directory in the work tree is a repository of its own, as git's `is_git_directory`
//! decides: what makes a nested repository, which neither the untracked walk nor `status` enters.

use bstr::{BStr, BString, ByteSlice};

/// git's `is_git_directory` for the `.git` directory `dir` in the work tree: a `HEAD`, and
/// `objects` and `refs` directories (a `commondir` file names where those are: not followed,
/// taken as a repository).
pub(crate) fn is_git_directory(dirs: &mut crate::fs::Dirs<'_>, dir: &BStr) -> bool {
    use crate::fs::FileType;
    let mut kind = |name: &str| {
        dirs.file_type(BString::from(format!("{dir}/{name}")).as_bstr())
            .ok()
            .flatten()
    };
    kind("HEAD").is_some()
        && (kind("commondir").is_some()
            || (kind("objects") == Some(FileType::Directory)
                && kind("refs") == Some(FileType::Directory)))
}
