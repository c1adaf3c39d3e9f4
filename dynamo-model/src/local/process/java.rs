//! A Java runtime for DynamoDB Local: the one the machine has, or, only when the user
//! asked for it with [`INSTALL_JAVA_VAR`], one installed with apt-get.

use super::*;

/// The environment variable that lets [`ensure_java`] install Java when none is found:
/// `DYNAMO_MODEL_INSTALL_JAVA=1` (or `true`, `yes`). Unset, empty, `0` or anything else,
/// a missing Java is an error ([`JavaNotFound`]) and nothing is installed.
pub const INSTALL_JAVA_VAR: &str = "DYNAMO_MODEL_INSTALL_JAVA";

/// The Debian and Ubuntu package installed on opt-in: DynamoDB Local 3.x needs Java 17 or
/// newer.
const JAVA_PACKAGE: &str = "openjdk-17-jre-headless";

/// Makes sure a `java` executable exists and returns the command to run it.
///
/// `$JAVA_HOME/bin/java` is preferred when it exists and works, then `java` from `PATH`.
/// If neither runs `java -version`, Java is installed only when [`INSTALL_JAVA_VAR`] is
/// set to `1`: on a machine with apt-get (Debian, Ubuntu), this runs `apt-get update` and
/// `apt-get install -y --no-install-recommends openjdk-17-jre-headless` (through `sudo -n`
/// when not root), under the same lock as [`install`] so that parallel test processes do
/// not fight over dpkg's lock. Otherwise it returns [`LocalError::JavaNotFound`], whose
/// message gives the command to run.
pub fn ensure_java() -> Result<PathBuf, LocalError> {
    static JAVA: OnceLock<PathBuf> = OnceLock::new();
    if let Some(java) = JAVA.get() {
        return Ok(java.clone());
    }
    let java = match find_java() {
        Some(java) => java,
        None => {
            let _lock = lock_cache(&cache_dir())?;
            let opted_in = opted_in(std::env::var_os(INSTALL_JAVA_VAR).as_deref());
            match plan(find_java(), opted_in, has_apt_get) {
                JavaPlan::Use(java) => java,
                JavaPlan::Refuse(err) => return Err(err),
                JavaPlan::InstallWithApt => {
                    apt_install_java()?;
                    find_java().ok_or_else(|| LocalError::JavaMissing {
                        detail: format!(
                            "{JAVA_PACKAGE} was installed but `java -version` still fails"
                        ),
                    })?
                }
            }
        }
    };
    Ok(JAVA.get_or_init(|| java).clone())
}

/// What [`ensure_java`] does, decided apart from doing it so that it can be tested
/// without installing anything.
#[derive(Debug)]
enum JavaPlan {
    /// A working java was found.
    Use(PathBuf),
    /// None was found, the user opted in, and apt-get is there.
    InstallWithApt,
    /// None was found and none may (or can) be installed.
    Refuse(LocalError),
}

/// The decision: a java found is used; otherwise install only on opt-in and only where
/// apt-get exists (asked last, so that a machine with Java never probes for it).
fn plan(found: Option<PathBuf>, opted_in: bool, has_apt_get: impl FnOnce() -> bool) -> JavaPlan {
    match found {
        Some(java) => JavaPlan::Use(java),
        None if !opted_in => JavaPlan::Refuse(LocalError::JavaNotFound(JavaNotFound {
            opted_in,
            apt_get: has_apt_get(),
        })),
        None => {
            if has_apt_get() {
                JavaPlan::InstallWithApt
            } else {
                JavaPlan::Refuse(LocalError::JavaNotFound(JavaNotFound {
                    opted_in,
                    apt_get: false,
                }))
            }
        }
    }
}

/// Whether the value of [`INSTALL_JAVA_VAR`] opts in: `1`, `true` or `yes`, in any case.
fn opted_in(value: Option<&std::ffi::OsStr>) -> bool {
    value.and_then(|v| v.to_str()).is_some_and(|v| {
        ["1", "true", "yes"]
            .iter()
            .any(|yes| v.trim().eq_ignore_ascii_case(yes))
    })
}

/// Whether `apt-get` runs here.
fn has_apt_get() -> bool {
    runs("apt-get".as_ref(), "--version")
}

/// Whether `program arg` runs and succeeds (its output discarded).
fn runs(program: &std::path::Path, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// Why no Java was found and none installed, and the command that fixes it on this
/// machine: its `Display` and its `Debug` are the same message, so that a `main` or a test
/// returning the error shows the command, not only the field values.
#[derive(Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JavaNotFound {
    /// Whether [`INSTALL_JAVA_VAR`] asked for an install.
    pub opted_in: bool,
    /// Whether this machine has apt-get, with which Java is installed on opt-in.
    pub apt_get: bool,
}

impl std::fmt::Display for JavaNotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::fmt::Debug for JavaNotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl JavaNotFound {
    fn message(&self) -> String {
        let JavaNotFound { opted_in, apt_get } = *self;
        let missing = format!(
            "DynamoDB Local {VERSION} needs Java 17 or newer, and no working `java` was found \
             ($JAVA_HOME/bin/java, or `java` on PATH)"
        );
        let own = "or point DYNAMODB_ENDPOINT at a DynamoDB Local you run yourself";
        if !apt_get {
            let why = if opted_in {
                format!(
                    "; {INSTALL_JAVA_VAR} is set, but only apt-get (Debian, Ubuntu) can be used"
                )
            } else {
                String::new()
            };
            return format!(
                "{missing}{why}. Install a Java 17 (or newer) runtime with your system's package \
                 manager and put it on PATH or in JAVA_HOME, {own}"
            );
        }
        format!(
            "{missing}. Run the command again with {INSTALL_JAVA_VAR}=1 to let dynamo-model \
             install {JAVA_PACKAGE} with apt-get (as root, or with `sudo -n`), e.g. \
             `{INSTALL_JAVA_VAR}=1 cargo test`; or install it yourself: \
             `sudo apt-get install -y --no-install-recommends {JAVA_PACKAGE}`; {own}"
        )
    }
}

/// The first java that runs `java -version`: `$JAVA_HOME/bin/java`, then `PATH`'s.
fn find_java() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|v| !v.is_empty()) {
        let java = PathBuf::from(home).join("bin").join("java");
        if java.is_file() {
            // Java is started from the install folder, where a relative path breaks.
            candidates.push(std::path::absolute(&java).unwrap_or(java));
        }
    }
    candidates.push(PathBuf::from("java"));
    candidates.into_iter().find(|java| runs(java, "-version"))
}

/// Installs OpenJDK 17's headless runtime with apt-get, through `sudo -n` when not root.
fn apt_install_java() -> Result<(), LocalError> {
    let is_root = Command::new("id")
        .arg("-u")
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    let steps: [&[&str]; 2] = [
        &["update"],
        &["install", "-y", "--no-install-recommends", JAVA_PACKAGE],
    ];
    for args in steps {
        let mut command = if is_root {
            Command::new("apt-get")
        } else {
            // `-n`: fail instead of prompting for a password nobody can type in a test.
            let mut sudo = Command::new("sudo");
            sudo.args(["-n", "apt-get"]);
            sudo
        };
        let sudo = if is_root { "" } else { "sudo -n " };
        let shown = format!("{sudo}apt-get {}", args.join(" "));
        let out = command
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdin(Stdio::null())
            .output()
            .map_err(|err| LocalError::JavaMissing {
                detail: format!("could not run `{shown}`: {err}"),
            })?;
        if !out.status.success() {
            return Err(LocalError::JavaMissing {
                detail: format!(
                    "`{shown}` failed ({}): {}",
                    out.status,
                    last_lines(&out.stderr, 10)
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn never() -> bool {
        panic!("apt-get probed although the answer cannot change the plan")
    }

    #[test]
    fn a_java_found_is_used_whatever_the_opt_in() {
        for opted in [false, true] {
            let plan = plan(Some(PathBuf::from("/opt/jdk/bin/java")), opted, never);
            assert!(matches!(plan, JavaPlan::Use(java) if java == Path::new("/opt/jdk/bin/java")));
        }
    }

    #[test]
    fn no_java_and_no_opt_in_installs_nothing() {
        for apt in [false, true] {
            let plan = plan(None, false, || apt);
            let JavaPlan::Refuse(err) = plan else {
                panic!("expected a refusal, got {plan:?}");
            };
            assert!(
                matches!(err, LocalError::JavaNotFound(JavaNotFound { opted_in: false, apt_get }) if apt_get == apt)
            );
        }
    }

    #[test]
    fn no_java_and_an_opt_in_installs_only_with_apt_get() {
        assert!(matches!(
            plan(None, true, || true),
            JavaPlan::InstallWithApt
        ));
        let plan = plan(None, true, || false);
        assert!(matches!(
            plan,
            JavaPlan::Refuse(LocalError::JavaNotFound(JavaNotFound {
                opted_in: true,
                apt_get: false
            }))
        ));
    }

    #[test]
    fn the_opt_in_values() {
        for yes in ["1", "true", "TRUE", "yes", " 1 "] {
            assert!(opted_in(Some(OsStr::new(yes))), "{yes:?}");
        }
        for no in ["", "0", "false", "no", "2"] {
            assert!(!opted_in(Some(OsStr::new(no))), "{no:?}");
        }
        assert!(!opted_in(None));
    }

    #[test]
    fn the_refusal_gives_the_command_to_run() {
        let reason = JavaNotFound {
            opted_in: false,
            apt_get: true,
        };
        let apt = LocalError::JavaNotFound(reason).to_string();
        // What `main` and tests print for an error they return.
        assert_eq!(
            format!("{:?}", LocalError::JavaNotFound(reason)),
            format!("JavaNotFound({apt})")
        );
        assert!(
            apt.contains("DYNAMO_MODEL_INSTALL_JAVA=1 cargo test"),
            "{apt}"
        );
        assert!(
            apt.contains("sudo apt-get install -y --no-install-recommends openjdk-17-jre-headless"),
            "{apt}"
        );
        assert!(apt.contains("Java 17"), "{apt}");
        let elsewhere = LocalError::JavaNotFound(JavaNotFound {
            opted_in: true,
            apt_get: false,
        })
        .to_string();
        assert!(elsewhere.contains("only apt-get"), "{elsewhere}");
        assert!(elsewhere.contains("JAVA_HOME"), "{elsewhere}");
        assert!(!elsewhere.contains("sudo"), "{elsewhere}");
    }
}
