//! The Windows side of [`crate::platform`], matching Git for Windows where git has a behaviour:
//! no `exec` (the child runs, git-par waits and exits with its code), console control events
//! for signals, `git.exe` on `PATH` as the real git, hooks with Git for Windows' own shell, the
//! identity from the account and the computer name. Approximations are named where they are.

mod owner;

pub(crate) use owner::owned_by_current_user;

use gitpar::sys::canonicalize;
use std::ffi::{OsStr, OsString};
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};

use windows_sys::Win32::Foundation::{FALSE, TRUE};

/// git's exit code for a child that ended with `status`: Git for Windows' `WEXITSTATUS`, the
/// low byte of the process's exit code (there are no signals).
pub(crate) fn exit_code(status: ExitStatus) -> u8 {
    status
        .code()
        .and_then(|code| u8::try_from(code & 0xff).ok())
        .unwrap_or(crate::exit::FATAL)
}

/// Set while a child runs a call handed to it whole ([`exec`]): Ctrl-C is then the child's
/// alone (it gets its own event on the shared console), and git-par waits for it to end.
static HANDED_OVER: AtomicBool = AtomicBool::new(false);

/// Windows has no `exec`: run `cmd` with this process's standard streams, wait for it and exit
/// with its exit code, all 32 bits of it, so that the caller sees what it would have seen of the
/// child alone. Returns only the error of a child that could not start.
pub(crate) fn exec(cmd: &mut Command) -> std::io::Error {
    install_interrupt_handler();
    HANDED_OVER.store(true, Ordering::SeqCst);
    match cmd.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(i32::from(crate::exit::FATAL))),
        Err(e) => {
            HANDED_OVER.store(false, Ordering::SeqCst);
            e
        }
    }
}

/// A Windows program learns the name it was started by only from its command line, which std
/// writes from the program's path, and Git for Windows does not depend on it: nothing to do.
pub(crate) fn name_argv0(_cmd: &mut Command, _name: &str) {}

/// This program's own file (links resolved): what a `git.exe` on `PATH` must not be.
pub(crate) fn this_program() -> std::io::Result<PathBuf> {
    std::env::current_exe().and_then(canonicalize)
}

/// Returns true if and only if `candidate` is this program (`me`, from [`this_program`]): the
/// same path, the same file (a hard link, as `git par shim` makes), or a copy of it (its
/// fallback), so that git-par standing in for `git.exe` never hands a call to itself.
pub(crate) fn same_program(candidate: &Path, me: &Path) -> bool {
    if canonicalize(candidate).ok().as_deref() == Some(me) {
        return true;
    }
    match (file_id(candidate), file_id(me)) {
        (Some(a), Some(b)) if a == b => return true,
        _ => {}
    }
    same_contents(candidate, me)
}

/// The volume serial number and file index of `path`: equal for two names of one file.
fn file_id(path: &Path) -> Option<(u32, u32, u32)> {
    use windows_sys::Win32::Storage::FileSystem::{
        GetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION,
    };
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: an all-zero BY_HANDLE_FILE_INFORMATION is a valid value of this plain C struct.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is open for as long as `file` lives; `info` is writable.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    (ok != 0).then_some((
        info.dwVolumeSerialNumber,
        info.nFileIndexHigh,
        info.nFileIndexLow,
    ))
}

/// Returns true if and only if the files `a` and `b` hold the same bytes; read only when their
/// sizes are equal, which a real git and git-par never are.
fn same_contents(a: &Path, b: &Path) -> bool {
    let size = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    };
    match (size(a), size(b)) {
        (Some(x), Some(y)) if x == y => {}
        _ => return false,
    }
    matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// Returns true if and only if `argv0` (how this process was started) names the program
/// `name`: its last component is `name` or `name.exe`, in any case (`GIT.EXE` is `git.exe`).
pub(crate) fn invoked_as(argv0: &OsStr, name: &str) -> bool {
    let Some(file) = Path::new(argv0).file_name().and_then(OsStr::to_str) else {
        return false;
    };
    let file = file.to_ascii_lowercase();
    file == name || file.strip_suffix(".exe") == Some(name)
}

/// The program `name` in `dir` as `CreateProcess` can start it: `dir\name.exe`. A `git.cmd` or
/// `git.bat` wrapper is no git to hand calls to: Git for Windows puts `cmd\git.exe` on `PATH`.
pub(crate) fn program_in(dir: &Path, name: &str) -> Option<PathBuf> {
    let path = dir.join(format!("{name}.exe"));
    path.is_file().then_some(path)
}

/// The command `name` in `dir` as Git for Windows looks up its external commands (`git-NAME`):
/// `name.exe`, else a file `name` that starts with `#!` (a script git runs with its shell).
pub(crate) fn command_in(dir: &Path, name: &str) -> Option<PathBuf> {
    if let Some(exe) = program_in(dir, name) {
        return Some(exe);
    }
    let path = dir.join(name);
    let mut head = [0u8; 2];
    let script = std::fs::File::open(&path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"#!");
    script.then_some(path)
}

/// The name of the stand-in for git that `git par shim` makes.
pub(crate) const LINK_NAME: &str = "git.exe";

/// Make `link` stand for the program `me`: a hard link (a symbolic link needs a privilege
/// most accounts lack), else, across volumes, a copy. Either is told apart from a real git by
/// [`same_program`]; a copy must be made again when git-par is updated.
pub(crate) fn make_link(me: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::hard_link(me, link).or_else(|_| std::fs::copy(me, link).map(|_| ()))
}

/// The lines that put `dir` first on `PATH`, one for each shell git is used from on Windows (Git
/// Bash, `cmd.exe`, PowerShell), each ending in a comment of its own shell that names it: the
/// user runs the line of theirs. `PATH`, not an alias (`doskey`, `Set-Alias`): the programs and
/// scripts that call `git` see it too.
pub(crate) fn path_lines(dir: &Path) -> Vec<String> {
    let native = dir.display().to_string();
    vec![
        format!("export PATH=\"{}:$PATH\"  # Git Bash", msys_path(&native)),
        format!("set \"PATH={native};%PATH%\" & rem cmd.exe"),
        format!("$env:Path = \"{native};\" + $env:Path  # PowerShell"),
    ]
}

/// A Windows path as Git Bash (MSYS2) names it: `C:\x\y` is `/c/x/y`, `\\host\share` is
/// `//host/share`.
fn msys_path(native: &str) -> String {
    let slashed = native.replace('\\', "/");
    let bytes = slashed.as_bytes();
    if bytes.len() >= 2 && bytes[1] == b':' && bytes[0].is_ascii_alphabetic() {
        let drive = char::from(bytes[0].to_ascii_lowercase());
        return format!("/{drive}{}", &slashed[2..]);
    }
    slashed
}

/// What separates the entries of a list of paths in a variable (`GIT_CEILING_DIRECTORIES`).
pub(crate) const PATH_LIST_SEPARATOR: u8 = b';';

/// git-par finds the real git when it starts and names it in `GIT_PAR_REAL_GIT` for the engine
/// and its children: `CreateProcess` looks for `git` in the directory of the running program
/// before `PATH`, where a `git.exe` may be git-par itself.
pub(crate) const PINS_REAL_GIT: bool = true;

/// Variables hooks need beyond git's: a hook is a shell script, which Windows cannot start; Git
/// for Windows runs it with the interpreter its `#!` names, found on the `PATH` its `git.exe`
/// launcher set up (the `bin` of its MinGW tree, then `usr\bin` with `sh.exe`). The same
/// directories, found from the real git's location, go first on the hooks' `PATH`.
pub(crate) fn hook_env() -> Vec<(&'static str, Option<OsString>)> {
    let Some(git) = std::env::var_os(gitpar::REAL_GIT).filter(|g| !g.is_empty()) else {
        return Vec::new();
    };
    let Some(root) = git_root(Path::new(&git)) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = ["mingw64", "clangarm64", "ucrt64", "mingw32"]
        .iter()
        .map(|tree| root.join(tree).join("bin"))
        .filter(|d| d.join("git.exe").is_file())
        .take(1)
        .collect();
    dirs.extend(
        [root.join("usr").join("bin"), root.join("bin")]
            .into_iter()
            .filter(|d| d.join("sh.exe").is_file())
            .take(1),
    );
    if dirs.is_empty() {
        return Vec::new();
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let all = dirs.into_iter().chain(std::env::split_paths(&path));
    match std::env::join_paths(all) {
        Ok(joined) => vec![("PATH", Some(joined))],
        Err(_) => Vec::new(),
    }
}

/// The root of the Git for Windows installation `git` (a `git.exe`) belongs to: `ROOT` of
/// `ROOT\cmd\git.exe`, `ROOT\bin\git.exe` or `ROOT\mingw64\bin\git.exe` (and the other MinGW
/// trees); `None` for a git elsewhere.
fn git_root(git: &Path) -> Option<PathBuf> {
    let dir = git.parent()?;
    let above = dir.parent()?;
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
    };
    let root = match name(dir).as_deref() {
        Some("cmd") => above,
        Some("bin")
            if matches!(
                name(above).as_deref(),
                Some("mingw64" | "clangarm64" | "ucrt64" | "mingw32")
            ) =>
        {
            above.parent()?
        }
        Some("bin") => above,
        _ => return None,
    };
    let has_shell = ["usr\\bin\\sh.exe", "bin\\sh.exe"]
        .iter()
        .any(|s| root.join(s).is_file());
    has_shell.then(|| root.to_owned())
}

/// The current directory, canonical as [`canonicalize`] makes it: the work tree is found
/// canonical, and the prefix of the current directory in it is only found when both are named
/// alike (the same case of the drive letter, no `\\?\`).
pub(crate) fn current_dir() -> std::io::Result<PathBuf> {
    let cwd = std::env::current_dir()?;
    Ok(canonicalize(&cwd).unwrap_or(cwd))
}

/// The current directories of the processes that started this one (see the Unix side): none
/// known. Windows refuses to remove a directory a process is in, so nothing depends on them.
pub(crate) fn callers_dirs() -> Vec<PathBuf> {
    Vec::new()
}

/// Returns true if and only if the directory `path` may be searched: Git for Windows' `access`
/// ignores `X_OK` (Windows has no such bit), so this is whether it exists.
pub(crate) fn searchable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok()
}

/// The device `path` is on, as Git for Windows' `stat` reports it: always 0 ("not used by
/// Git"), so `GIT_DISCOVERY_ACROSS_FILESYSTEM` changes nothing there, as in git.
pub(crate) fn device_of(path: &Path) -> std::io::Result<u64> {
    std::fs::metadata(path).map(|_| 0)
}

/// The login name (`GetUserNameW`, else `USERNAME`) and the full name of the current user, as
/// Git for Windows' `getpwuid` gives them: the account's display name, `unknown` when it has
/// none (local accounts usually have none: git then calls the committer `unknown`).
pub(crate) fn account() -> (String, String) {
    use windows_sys::Win32::Security::Authentication::Identity::{GetUserNameExW, NameDisplay};
    use windows_sys::Win32::System::WindowsProgramming::GetUserNameW;
    // SAFETY: the buffer and its length are valid and writable for the call.
    let login = wide(|buf, len| unsafe { GetUserNameW(buf, len) } != 0)
        .or_else(|| std::env::var("USERNAME").ok())
        .unwrap_or_else(|| "unknown".into());
    // SAFETY: as above.
    let display = wide(|buf, len| unsafe { GetUserNameExW(NameDisplay, buf, len) })
        .unwrap_or_else(|| "unknown".into());
    (login, display)
}

/// The e-mail address Git for Windows takes before `user@host`: the account's user principal
/// name (`user@domain`), which domain accounts have.
pub(crate) fn user_email() -> Option<String> {
    use windows_sys::Win32::Security::Authentication::Identity::{
        GetUserNameExW, NameUserPrincipal,
    };
    // SAFETY: the buffer and its length are valid and writable for the call.
    wide(|buf, len| unsafe { GetUserNameExW(NameUserPrincipal, buf, len) })
        .filter(|e| !e.is_empty())
}

/// This machine's DNS host name (what Git for Windows' `gethostname` returns), else
/// `COMPUTERNAME`, else `localhost`.
pub(crate) fn hostname() -> String {
    use windows_sys::Win32::System::SystemInformation::{
        ComputerNameDnsHostname, GetComputerNameExW,
    };
    // SAFETY: the buffer and its length are valid and writable for the call.
    wide(|buf, len| unsafe { GetComputerNameExW(ComputerNameDnsHostname, buf, len) } != 0)
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "localhost".into())
}

/// The text a Win32 call writes into a buffer of UTF-16 units whose length it takes and
/// updates (`call(buffer, &mut length)`, true on success); `None` when it fails.
fn wide(call: impl FnOnce(*mut u16, &mut u32) -> bool) -> Option<String> {
    let mut buf = [0u16; 1024];
    let mut len = buf.len() as u32;
    if !call(buf.as_mut_ptr(), &mut len) {
        return None;
    }
    // The calls disagree on whether the length counts the NUL; the buffer was zeroed.
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    String::from_utf16(&buf[..end]).ok()
}

/// glibc's allocator setting of the Unix side has no counterpart here.
pub(crate) fn tune_allocator() {}

/// The console control handler: Ctrl-C and Ctrl-Break are git-par's SIGINT
/// ([`super::interrupted`]), except while a child runs a call handed to it whole.
/// Other events (the console closing, logoff) are left to the system.
unsafe extern "system" fn on_control(kind: u32) -> windows_sys::core::BOOL {
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_C_EVENT};
    if kind != CTRL_C_EVENT && kind != CTRL_BREAK_EVENT {
        return FALSE;
    }
    if !HANDED_OVER.load(Ordering::SeqCst) {
        super::interrupted();
    }
    TRUE
}

/// Have Ctrl-C and Ctrl-Break call [`super::interrupted`] instead of ending the process
/// (`SetConsoleCtrlHandler`); installed once however often asked.
pub(super) fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
        // SAFETY: `on_control` only touches atomics and may end the process.
        unsafe { SetConsoleCtrlHandler(Some(on_control), TRUE) };
    });
}

/// End the process at once with `code`, running no destructor and taking no lock (the main
/// thread may hold the standard output's).
pub(crate) fn exit_now(code: u8) -> ! {
    use windows_sys::Win32::System::Threading::{ExitProcess, GetCurrentProcess, TerminateProcess};
    // SAFETY: ending this very process; `GetCurrentProcess` is a pseudo-handle that needs no
    // closing.
    unsafe {
        TerminateProcess(GetCurrentProcess(), u32::from(code));
        ExitProcess(u32::from(code))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_is_known_by_any_case_with_or_without_exe() {
        assert!(invoked_as(OsStr::new(r"C:\x\git.exe"), "git"));
        assert!(invoked_as(OsStr::new("GIT.EXE"), "git"));
        assert!(invoked_as(OsStr::new("git"), "git"));
        assert!(!invoked_as(OsStr::new(r"C:\x\git-par.exe"), "git"));
        assert!(!invoked_as(OsStr::new("git.cmd"), "git"));
    }

    #[test]
    fn git_bash_names_drives_and_shares_its_own_way() {
        assert_eq!(msys_path(r"C:\Users\me\bin"), "/c/Users/me/bin");
        assert_eq!(msys_path(r"\\host\share\bin"), "//host/share/bin");
        let lines = path_lines(Path::new(r"D:\tools"));
        assert_eq!(lines[0], "export PATH=\"/d/tools:$PATH\"  # Git Bash");
        assert_eq!(lines[1], "set \"PATH=D:\\tools;%PATH%\" & rem cmd.exe");
        assert_eq!(
            lines[2],
            "$env:Path = \"D:\\tools;\" + $env:Path  # PowerShell"
        );
    }

    #[test]
    fn canonical_paths_lose_the_verbatim_prefix() {
        let dir = canonicalize(std::env::temp_dir()).unwrap();
        let text = dir.to_str().unwrap();
        assert!(!text.starts_with(r"\\?\"), "{text}");
        assert_eq!(text.as_bytes()[1], b':', "{text}");
        assert_eq!(current_dir().unwrap(), canonicalize(".").unwrap());
    }

    #[test]
    fn the_root_of_git_for_windows_is_found_from_either_git_exe() {
        let tmp = std::env::temp_dir().join(format!("git-par-root-{}", std::process::id()));
        for dir in [r"cmd", r"mingw64\bin", r"usr\bin"] {
            std::fs::create_dir_all(tmp.join(dir)).unwrap();
        }
        std::fs::write(tmp.join(r"usr\bin\sh.exe"), b"").unwrap();
        assert_eq!(git_root(&tmp.join(r"cmd\git.exe")).as_deref(), Some(&*tmp));
        assert_eq!(
            git_root(&tmp.join(r"mingw64\bin\git.exe")).as_deref(),
            Some(&*tmp)
        );
        assert_eq!(git_root(&tmp.join(r"elsewhere\git.exe")), None);
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_link_or_a_copy_of_a_program_is_that_program() {
        let tmp = std::env::temp_dir().join(format!("git-par-self-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        // A stand-in for this program: Wine refuses to copy a running one.
        let me = tmp.join("git-par.exe");
        std::fs::write(&me, b"MZ git-par").unwrap();
        let me = canonicalize(&me).unwrap();
        let link = tmp.join(LINK_NAME);
        make_link(&me, &link).unwrap();
        assert!(same_program(&link, &me));
        assert_eq!(program_in(&tmp, "git"), Some(link.clone()));
        let copy = tmp.join("copy.exe");
        std::fs::copy(&me, &copy).unwrap();
        assert!(same_program(&copy, &me));
        std::fs::write(tmp.join("other.exe"), b"MZ other!!").unwrap();
        assert!(!same_program(&tmp.join("other.exe"), &me));
        std::fs::write(tmp.join("git-script"), b"#!/bin/sh\n").unwrap();
        assert!(command_in(&tmp, "git-script").is_some());
        assert!(command_in(&tmp, "other").is_some());
        std::fs::write(tmp.join("git-text"), b"text").unwrap();
        assert!(command_in(&tmp, "git-text").is_none());
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn exit_codes_are_the_low_byte() {
        use std::os::windows::process::ExitStatusExt;
        assert_eq!(exit_code(ExitStatus::from_raw(3)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(0x1_0001)), 1);
        assert_eq!(exit_code(ExitStatus::from_raw(0xC000_013A)), 0x3A);
    }
}
