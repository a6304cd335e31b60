//! A bridge from Windows programs under Wine to the Linux host's `git` and `sh`, for git-par's
//! Windows tests only (never shipped).
//!
//! Why: under Wine, a Windows program can start a Unix program, but Rust gets no process handle
//! back ("Invalid handle", os error 6): no exit code, no pipes. git-par.exe starts `git` (clone,
//! worktree add, rev-parse, ...) and `sh` (hooks, as Git for Windows runs them), and there is no
//! Git for Windows on the test machines. So the tests put a small Windows program on Wine's `PATH`
//! under the names `git.exe` and `sh.exe` (the [`client`]); it forwards its arguments,
//! environment, working directory and standard streams over TCP on the loopback address to a
//! server on the Linux host (the `server` module), which runs the host's real program and sends
//! back its output and exit code.
//!
//! # Protocol
//!
//! One TCP connection per run. The client opens with the 4 bytes [`protocol::MAGIC`]
//! (`WBR1`, the version is its last byte); after that both directions carry frames:
//!
//! ```text
//! frame   = kind:u8  length:u32-le  payload[length]        (length <= MAX_PAYLOAD, 16 MiB)
//! bytes   = length:u32-le  data[length]
//! ```
//!
//! | kind | direction        | payload                                                        |
//! |------|------------------|----------------------------------------------------------------|
//! | 1    | client → server  | request: `bytes` program, `bytes` cwd, `u32` argc, argc × `bytes` arg, `u32` envc, envc × (`bytes` name, `bytes` value) |
//! | 2    | client → server  | stdin data (never empty)                                       |
//! | 3    | client → server  | stdin end of file (empty payload)                              |
//! | 4    | server → client  | stdout data                                                    |
//! | 5    | server → client  | stderr data                                                    |
//! | 6    | server → client  | exit code, `i32` little-endian; always the server's last frame |
//!
//! The request is the client's first frame; stdin frames follow while the server streams output
//! back, so a program that reads and writes at once (a filter, `git update-index --index-info`)
//! does not deadlock. Strings are bytes: UTF-8 from the Windows side (lossy for unpaired
//! surrogates), raw bytes on the Linux side. The program is a bare name (`git`, `sh`), which
//! the server looks up on its own `PATH`. When the server cannot start the program it sends the
//! reason as stderr data and exit code 127 (not found) or 126 (any other failure), as a shell
//! would; a program killed by a signal exits `128 + signal`, as git's shell reports it.
//!
//! # Translation (server side, Windows → Linux)
//!
//! The working directory, each argument and each environment value passed on (see
//! [`environment`]) that is a Windows absolute path, i.e. starts with a drive letter, a colon
//! and a slash or backslash, becomes a host path with its backslashes turned into slashes:
//! `Z:` is `/`, `C:` is `$WINEPREFIX/drive_c`, any other drive is what Wine's
//! `$WINEPREFIX/dosdevices/x:` link points at. An environment value that is a `;`-separated list
//! of such paths becomes a `:`-separated list of host paths. Nothing else is touched (see
//! [`translate`]). Output is not translated back: Rust's std on Windows takes `/work/x` as
//! rooted on the current drive, which under Wine is `Z:`, i.e. `/`.

pub mod client;
pub mod environment;
pub mod protocol;
#[cfg(unix)]
pub mod server;
pub mod translate;
