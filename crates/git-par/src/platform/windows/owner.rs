//! Who owns a repository, as Git for Windows decides it (`is_path_owned_by_current_sid` in its
//! `compat/mingw.c`): the owner's SID against the current user's. git refuses a repository
//! another account owns unless `safe.directory` names it, since its configuration and hooks
//! would run as the current user (CVE-2022-24765: a `C:\.git` any user can create).

use std::ffi::c_void;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::ptr::null_mut;
use std::sync::OnceLock;

use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, ERROR_SUCCESS, HANDLE};
use windows_sys::Win32::Security::Authorization::{GetNamedSecurityInfoW, SE_FILE_OBJECT};
use windows_sys::Win32::Security::{
    CheckTokenMembership, EqualSid, GetTokenInformation, IsValidSid, IsWellKnownSid, TokenUser,
    WinBuiltinAdministratorsSid, DACL_SECURITY_INFORMATION, OWNER_SECURITY_INFORMATION,
    PSECURITY_DESCRIPTOR, PSID, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// git's `is_path_owned_by_current_user`: the owner of `path` is the current user, or the
/// Administrators group while the current user is a member (files an elevated program made);
/// `HOME` itself counts as the user's, as Git for Windows has it (an administrator owns the
/// profile folder). A path whose owner cannot be read is not the user's, with git's error.
pub(crate) fn owned_by_current_user(path: &Path) -> bool {
    if is_home(path) {
        return true;
    }
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut owner: PSID = null_mut();
    let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
    // SAFETY: a NUL-terminated path; the out-pointers are live; the descriptor, which owns
    // what `owner` points into, is freed below with LocalFree as the call's contract asks.
    let err = unsafe {
        GetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
            &mut owner,
            null_mut(),
            null_mut(),
            null_mut(),
            &mut descriptor,
        )
    };
    if err != ERROR_SUCCESS {
        eprintln!(
            "error: failed to get owner for '{}' ({err})",
            path.display()
        );
        return false;
    }
    // SAFETY: `owner` points into the live descriptor (or is null, checked first).
    let owned = !owner.is_null()
        && unsafe { IsValidSid(owner) } != 0
        && (is_current_user(owner) || is_administrators_and_member(owner));
    // SAFETY: the descriptor GetNamedSecurityInfoW allocated, freed once.
    unsafe { LocalFree(descriptor) };
    owned
}

/// Returns true if and only if `path` is `HOME`, compared as Git for Windows does (`wcsicmp`:
/// case-insensitively), with either separator.
fn is_home(path: &Path) -> bool {
    let Some(home) = std::env::var_os("HOME") else {
        return false;
    };
    let plain = |s: &std::ffi::OsStr| s.to_string_lossy().replace('\\', "/").to_lowercase();
    plain(path.as_os_str()) == plain(&home)
}

/// Returns true if and only if `sid` is the current process's user.
fn is_current_user(sid: PSID) -> bool {
    // The TOKEN_USER of this process, its SID pointing into the same buffer (u64s for its
    // alignment); read once, as git caches `current_user_sid`.
    static USER: OnceLock<Option<Vec<u64>>> = OnceLock::new();
    let Some(buf) = USER.get_or_init(token_user) else {
        return false;
    };
    let user = buf.as_ptr().cast::<TOKEN_USER>();
    // SAFETY: the buffer holds a TOKEN_USER GetTokenInformation wrote, alive for the program;
    // both SIDs are valid (the caller checked `sid`).
    unsafe {
        let mine = (*user).User.Sid;
        IsValidSid(mine) != 0 && EqualSid(sid, mine) != 0
    }
}

/// The current process token's TOKEN_USER, in a buffer of u64s (see [`is_current_user`]).
fn token_user() -> Option<Vec<u64>> {
    let mut token: HANDLE = null_mut();
    // SAFETY: the pseudo-handle of this process and a live out-pointer.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return None;
    }
    let mut len = 0u32;
    // SAFETY: a size query (no buffer), then a buffer of at least the size it gave.
    unsafe {
        GetTokenInformation(token, TokenUser, null_mut(), 0, &mut len);
        let mut buf = vec![0u64; (len as usize).div_ceil(8)];
        let ok = GetTokenInformation(
            token,
            TokenUser,
            buf.as_mut_ptr().cast::<c_void>(),
            len,
            &mut len,
        );
        CloseHandle(token);
        (ok != 0).then_some(buf)
    }
}

/// Returns true if and only if `sid` is the Administrators group and the current user is in
/// it (with its token elevated: `CheckTokenMembership` counts only enabled groups).
fn is_administrators_and_member(sid: PSID) -> bool {
    let mut member = 0;
    // SAFETY: a valid SID; a null token asks about the calling thread's.
    unsafe {
        IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
            && CheckTokenMembership(null_mut(), sid, &mut member) != 0
            && member != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_this_user_made_is_this_users_and_a_missing_path_is_nobodys() {
        let dir = tempfile::tempdir().unwrap();
        assert!(owned_by_current_user(dir.path()));
        std::fs::write(dir.path().join("f"), "x").unwrap();
        assert!(owned_by_current_user(&dir.path().join("f")));
        assert!(!owned_by_current_user(&dir.path().join("missing")));
    }
}
