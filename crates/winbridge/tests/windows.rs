//! The bridge end to end, as git-par.exe meets it: a Windows test program under Wine starts
//! `git` and `sh` with `std::process::Command`, Wine finds the bridge's `git.exe` and `sh.exe`
//! on its `PATH` (`WINEPATH`), and the host's git and sh do the work.
//!
//! Run with the bridge up: `scripts/windows test` runs it, or by hand
//! `scripts/windows bridge cargo test -Zbuild-std=std,panic_abort --target x86_64-pc-windows-gnu
//! -p winbridge --test windows` after `eval "$(scripts/windows env)"`. Built for Linux, or run
//! without the bridge, every test says why it is skipped and passes.

#[cfg(not(windows))]
#[test]
fn runs_only_under_wine() {
    eprintln!(
        "skipped: these tests are a Windows program; `scripts/windows test` runs them under Wine"
    );
}

#[cfg(windows)]
mod under_wine {
    use std::io::{Read, Write};
    use std::path::{Path, PathBuf};
    use std::process::{Command, Output, Stdio};
    use std::thread;

    /// Returns true if and only if the bridge is up; says why the test is skipped otherwise.
    fn bridge_up() -> bool {
        let up = std::env::var_os("WINBRIDGE_PORT").is_some();
        if !up {
            eprintln!("skipped: WINBRIDGE_PORT is not set; run under `scripts/windows bridge`");
        }
        up
    }

    /// A scratch folder under `Z:\tmp`, as a Windows path and as the host path it is; removed
    /// (by the host's `rm`, which ignores Windows' read-only attribute on git's objects) on drop.
    struct Scratch {
        windows: PathBuf,
        host: String,
    }

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let leaf = format!("winbridge-test-{}-{name}", std::process::id());
            let scratch = Scratch {
                windows: PathBuf::from(format!(r"Z:\tmp\{leaf}")),
                host: format!("/tmp/{leaf}"),
            };
            std::fs::create_dir_all(&scratch.windows).unwrap();
            scratch
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = Command::new("sh")
                .args(["-c", "rm -rf \"$0\"", &self.host])
                .status();
        }
    }

    /// Runs `command` with `input` on its stdin, written by a thread while the output is read.
    fn run_with_input(command: &mut Command, input: Vec<u8>) -> Output {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("git.exe or sh.exe is on Wine's PATH (WINEPATH)");
        let mut stdin = child.stdin.take().unwrap();
        let writer = thread::spawn(move || stdin.write_all(&input));
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap().unwrap();
        output
    }

    fn sh(script: &str) -> Output {
        Command::new("sh").args(["-c", script]).output().unwrap()
    }

    fn text(bytes: &[u8]) -> &str {
        std::str::from_utf8(bytes).unwrap()
    }

    #[test]
    fn git_version_is_the_hosts() {
        if !bridge_up() {
            return;
        }
        let bridged = Command::new("git").arg("--version").output().unwrap();
        let host = sh("git --version");
        assert!(bridged.status.success(), "{bridged:?}");
        assert!(text(&bridged.stdout).starts_with("git version "));
        assert_eq!(bridged.stdout, host.stdout);
    }

    #[test]
    fn rev_parse_works_from_a_z_drive_working_directory() {
        if !bridge_up() {
            return;
        }
        let scratch = Scratch::new("toplevel");
        let made = sh(&format!("git init -q {0} && mkdir {0}/sub", scratch.host));
        assert!(made.status.success(), "{made:?}");
        let out = Command::new("git")
            .args(["rev-parse", "--show-toplevel"])
            .current_dir(scratch.windows.join("sub"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(text(&out.stdout), format!("{}\n", scratch.host));
    }

    #[test]
    fn a_c_drive_path_reaches_the_same_folder() {
        if !bridge_up() {
            return;
        }
        // The temporary folder is on C:, which the server maps into the Wine prefix.
        let dir = std::env::temp_dir().join(format!("winbridge-test-{}-c", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("marker"), b"written by Windows").unwrap();
        let out = Command::new("sh")
            .args(["-c", "cat \"$0/marker\" && pwd", dir.to_str().unwrap()])
            .current_dir(&dir)
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let out_text = text(&out.stdout);
        let (marker, pwd) = out_text.split_at("written by Windows".len());
        assert_eq!(marker, "written by Windows", "{out:?}");
        // The host path, read back by Windows' std, is rooted on Z: = / under Wine.
        assert!(Path::new(pwd.trim()).ends_with(dir.file_name().unwrap()));
    }

    #[test]
    fn exit_codes_come_back() {
        if !bridge_up() {
            return;
        }
        let out = Command::new("git")
            .args(["rev-parse", "--verify", "nosuchref"])
            .current_dir(r"Z:\")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(128), "{out:?}");
        assert!(text(&out.stderr).contains("fatal"), "{out:?}");
        assert_eq!(sh("exit 3").status.code(), Some(3));
        assert_eq!(sh("exit 0").status.code(), Some(0));
        assert_eq!(sh("kill -KILL $$").status.code(), Some(128 + 9));
    }

    #[test]
    fn stdin_is_forwarded() {
        if !bridge_up() {
            return;
        }
        let mut hash = Command::new("git");
        hash.args(["hash-object", "--stdin"]);
        let out = run_with_input(&mut hash, b"hello\n".to_vec());
        assert_eq!(
            text(&out.stdout),
            "ce013625030ba8dba906f756967f9e9ca394464a\n"
        );
        // Five megabytes, against the host's git hashing the same bytes on its own.
        let out = run_with_input(&mut hash, vec![0; 5_000_000]);
        let host = sh("head -c 5000000 /dev/zero | git hash-object --stdin");
        assert_eq!(out.stdout, host.stdout);
        assert_eq!(out.stdout.len(), 41);
    }

    #[test]
    fn a_filter_is_fed_while_it_writes() {
        if !bridge_up() {
            return;
        }
        let data: Vec<u8> = (0..5_000_000u32).map(|i| (i % 251) as u8).collect();
        let out = run_with_input(Command::new("sh").args(["-c", "cat"]), data.clone());
        assert!(out.status.success());
        assert!(
            out.stdout == data,
            "cat gave back {} bytes",
            out.stdout.len()
        );
    }

    #[test]
    fn large_output_arrives_whole() {
        if !bridge_up() {
            return;
        }
        let out = sh("head -c 5000000 /dev/zero");
        assert_eq!(out.stdout.len(), 5_000_000);
        assert!(out.stdout.iter().all(|&b| b == 0));
        let scratch = Scratch::new("blob");
        let script = "git init -q \"$0\" && head -c 6000000 /dev/urandom >\"$0/big\" && \
                      git -C \"$0\" hash-object -w big";
        let blob = Command::new("sh")
            .args(["-c", script, &scratch.host])
            .output()
            .unwrap();
        assert!(blob.status.success(), "{blob:?}");
        let id = text(&blob.stdout).trim().to_owned();
        let mut want = Vec::new();
        std::fs::File::open(scratch.windows.join("big"))
            .unwrap()
            .read_to_end(&mut want)
            .unwrap();
        let out = Command::new("git")
            .args(["cat-file", "blob", &id])
            .current_dir(&scratch.windows)
            .output()
            .unwrap();
        assert!(out.status.success(), "{:?}", text(&out.stderr));
        assert!(
            out.stdout == want,
            "cat-file gave {} bytes",
            out.stdout.len()
        );
    }

    #[test]
    fn the_environment_follows_the_rule() {
        if !bridge_up() {
            return;
        }
        let out = Command::new("sh")
            .args([
                "-c",
                "echo \"$GIT_WINBRIDGE_A|${GIT_WINBRIDGE_B-unset}|${windir-unset}\"",
            ])
            .env("GIT_WINBRIDGE_A", r"Z:\tmp\a;Z:\tmp\b")
            .env("windir", r"C:\windows")
            .env_remove("GIT_WINBRIDGE_B")
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), "/tmp/a:/tmp/b|unset|unset\n");
    }

    #[test]
    fn arguments_keep_their_spaces_quotes_and_non_ascii_letters() {
        if !bridge_up() {
            return;
        }
        let args = [
            "two words",
            "qu\"ote",
            "tr\u{e8}s \u{65e5}\u{672c}",
            "",
            r"back\slash\",
        ];
        let out = Command::new("sh")
            .args(["-c", "printf '[%s]' \"$@\"", "sh"])
            .args(args)
            .output()
            .unwrap();
        let want: String = args.iter().map(|arg| format!("[{arg}]")).collect();
        assert_eq!(text(&out.stdout), want);
        let scratch = Scratch::new("d\u{e9}j\u{e0} vu");
        let out = Command::new("sh")
            .arg("-c")
            .arg("pwd")
            .current_dir(&scratch.windows)
            .output()
            .unwrap();
        assert_eq!(text(&out.stdout), format!("{}\n", scratch.host));
    }

    #[test]
    fn without_the_port_the_client_says_so() {
        if !bridge_up() {
            return;
        }
        let out = Command::new("git")
            .arg("--version")
            .env_remove("WINBRIDGE_PORT")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(128));
        assert!(text(&out.stderr).contains("WINBRIDGE_PORT"), "{out:?}");
    }

    #[test]
    fn runs_at_once_do_not_mix() {
        if !bridge_up() {
            return;
        }
        let runs: Vec<_> = (0..6)
            .map(|i| {
                let script = format!(
                    "head -c {} /dev/zero; echo err{i} >&2; exit {i}",
                    i * 300_000
                );
                thread::spawn(move || (i, sh(&script)))
            })
            .collect();
        for run in runs {
            let (i, out) = run.join().unwrap();
            assert_eq!(out.status.code(), Some(i));
            assert_eq!(out.stdout.len(), i as usize * 300_000);
            assert_eq!(text(&out.stderr), format!("err{i}\n"));
        }
    }
}
