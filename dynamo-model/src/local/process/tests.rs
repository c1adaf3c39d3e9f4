use super::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(temp_name(name));
    fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn checksum_mismatch_deletes_the_file() {
    let dir = scratch("sha");
    let file = dir.join("x.tgz");
    fs::write(&file, b"abc").unwrap();
    let err = verify_sha256(&file, TARBALL_SHA256).unwrap_err();
    match err {
        LocalError::ChecksumMismatch { expected, found } => {
            assert_eq!(expected, TARBALL_SHA256);
            assert_eq!(
                found,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(!file.exists());
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn checksum_match_keeps_the_file() {
    let dir = scratch("sha-ok");
    let file = dir.join("x.tgz");
    fs::write(&file, b"abc").unwrap();
    verify_sha256(
        &file,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    )
    .unwrap();
    assert!(file.exists());
    fs::remove_dir_all(dir).unwrap();
}

#[test]
fn port_clash_is_recognised_from_the_output() {
    let status = Command::new("sh").args(["-c", "exit 1"]).status().unwrap();
    let clash = LocalError::ProcessExited {
        status,
        output: "Caused by: java.net.BindException: Address already in use".to_owned(),
    };
    assert!(clash.is_port_clash());
    let other = LocalError::ProcessExited {
        status,
        output: "Error: Unable to access jarfile".to_owned(),
    };
    assert!(!other.is_port_clash());
    assert!(!other.duplicate().is_port_clash());
}

#[test]
fn duplicate_keeps_the_io_error() {
    let err = LocalError::Io {
        context: "ctx".to_owned(),
        source: io::Error::from_raw_os_error(2),
    };
    match err.duplicate() {
        LocalError::Io { context, source } => {
            assert_eq!(context, "ctx");
            assert_eq!(source.kind(), io::ErrorKind::NotFound);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_silent_port_is_not_ready() {
    // A listener that accepts but never answers must not count as HTTP.
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0; 256];
        let _ = stream.read(&mut buf);
        stream.write_all(b"SSH-2.0-x\r\n").unwrap();
    });
    assert!(!answers_http(port));
    handle.join().unwrap();
}

#[test]
fn an_http_answer_is_ready_and_listens_on_sees_the_owner() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    if cfg!(target_os = "linux") {
        assert_eq!(listens_on(std::process::id(), port), Some(true));
        assert_eq!(listens_on(std::process::id(), 0), Some(false));
    }
    let handle = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut buf = [0; 512];
        let _ = stream.read(&mut buf);
        stream
            .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            .unwrap();
    });
    assert!(answers_http(port));
    handle.join().unwrap();
}

#[test]
fn last_lines_keeps_the_end() {
    assert_eq!(last_lines(b"a\nb\nc\n", 2), "b\nc");
    assert_eq!(last_lines(b"", 2), "");
}
