//! The client's and the server's code against each other on Linux, with the host's `git`,
//! `sh` and `cat`: everything the bridge does except being a Windows program under Wine
//! (tests/windows.rs checks that part).
#![cfg(unix)]

use std::io::Cursor;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::OnceLock;
use std::thread;

use winbridge::client;
use winbridge::protocol::Request;
use winbridge::server::{self, Config};
use winbridge::translate::Drives;

/// One server for the whole test binary, on an ephemeral port.
fn port() -> u16 {
    static PORT: OnceLock<u16> = OnceLock::new();
    *PORT.get_or_init(|| {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = listener.local_addr().unwrap().port();
        let config = Config {
            drives: Drives::wine(None),
            verbose: false,
        };
        thread::spawn(move || server::serve(listener, config));
        port
    })
}

struct Output {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn bridge(program: &str, args: &[&str], cwd: &str, stdin: Vec<u8>) -> Output {
    bridge_env(program, args, cwd, &[], stdin)
}

fn bridge_env(
    program: &str,
    args: &[&str],
    cwd: &str,
    env: &[(&str, &str)],
    stdin: Vec<u8>,
) -> Output {
    let request = Request {
        program: program.into(),
        args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        cwd: cwd.into(),
        env: env
            .iter()
            .map(|(n, v)| (n.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect(),
    };
    let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port())).unwrap();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let code = client::run(
        stream,
        &request,
        Cursor::new(stdin),
        &mut stdout,
        &mut stderr,
    )
    .expect("the bridge works");
    Output {
        code,
        stdout,
        stderr,
    }
}

fn sh(script: &str) -> Output {
    bridge("sh", &["-c", script], r"Z:\", Vec::new())
}

#[test]
fn git_version_is_the_hosts() {
    let host = Command::new("git").arg("--version").output().unwrap();
    let out = bridge("git", &["--version"], r"Z:\tmp", Vec::new());
    assert_eq!((out.code, out.stdout), (0, host.stdout));
}

#[test]
fn exit_codes_and_signals_come_back() {
    assert_eq!(sh("exit 3").code, 3);
    assert_eq!(sh("exit 0").code, 0);
    assert_eq!(sh("kill -TERM $$").code, 128 + 15);
}

#[test]
fn stdout_and_stderr_stay_apart() {
    let out = sh("echo out; echo err >&2; echo out2");
    assert_eq!(out.stdout, b"out\nout2\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn stdin_is_fed_while_output_is_read() {
    // Far beyond a pipe's buffer each way: without full duplex this deadlocks.
    let data: Vec<u8> = (0..6_000_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let out = bridge("cat", &[], r"Z:\", data.clone());
    assert_eq!(out.code, 0);
    assert!(
        out.stdout == data,
        "cat returned {} bytes",
        out.stdout.len()
    );
}

#[test]
fn a_program_that_ignores_its_stdin_still_finishes() {
    let out = bridge("sh", &["-c", "echo done"], r"Z:\", vec![b'x'; 3_000_000]);
    assert_eq!((out.code, out.stdout), (0, b"done\n".to_vec()));
}

#[test]
fn the_working_directory_and_arguments_are_translated() {
    let out = bridge(
        "sh",
        &["-c", "pwd; echo \"$1\"", "sh", r"Z:\tmp\x"],
        r"Z:\tmp",
        Vec::new(),
    );
    assert_eq!(out.stdout, b"/tmp\n/tmp/x\n");
    let out = bridge(
        "sh",
        &["-c", "printf %s \"$0\"", r"Z:a\b"],
        r"Z:\",
        Vec::new(),
    );
    assert_eq!(out.stdout, br"Z:a\b", "not an absolute path: untouched");
}

#[test]
fn the_environment_follows_the_rule() {
    let env = [
        ("GIT_BRIDGE_TEST", r"Z:\tmp\a;Z:\tmp\b"),
        ("PATH", r"C:\windows\system32"),
        ("windir", r"C:\windows"),
    ];
    let script = "echo \"$GIT_BRIDGE_TEST|${windir-unset}\"; command -v git";
    let out = bridge_env("sh", &["-c", script], r"Z:\", &env, Vec::new());
    let host_git = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let mut want = b"/tmp/a:/tmp/b|unset\n".to_vec();
    want.extend(host_git.stdout);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&want)
    );
}

#[test]
fn a_missing_program_is_127_with_a_reason() {
    let out = bridge("no-such-program-winbridge", &[], r"Z:\", Vec::new());
    assert_eq!(out.code, 127);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot run no-such-program-winbridge"));
    let out = bridge("../sh", &[], r"Z:\", Vec::new());
    assert_eq!(out.code, 126);
}

#[test]
fn runs_at_once_do_not_mix() {
    let runs: Vec<_> = (0..8)
        .map(|i| {
            thread::spawn(move || {
                (
                    i,
                    sh(&format!("head -c {} /dev/zero; exit {i}", i * 100_000)),
                )
            })
        })
        .collect();
    for run in runs {
        let (i, out) = run.join().unwrap();
        assert_eq!((out.code, out.stdout.len()), (i, i as usize * 100_000));
    }
}
