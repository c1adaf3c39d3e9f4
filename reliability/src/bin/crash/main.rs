//! Crash harness: runs each protocol in a child process against DynamoDB Local and kills
//! it with SIGKILL at a seeded random moment spread over the protocol's whole duration
//! (between requests and during them). No destructor runs, nothing is flushed. The parent
//! then checks the protocol's invariant, runs its documented recovery and checks again.
//! A request the child had already sent may still be applied by the server after the
//! kill, as after any crash; the parent waits a quarter of a second for those first.
//!
//! ```sh
//! cargo run --release -p reliability --bin crash -- --kills 200   # the scripted run
//! cargo run -p reliability --bin crash -- --kills 10              # what .ci/run runs
//! ```
//!
//! Options: `--kills N` per protocol (default 20), `--seed S` (default 1),
//! `--only NAME` (chunked, transaction, batch, history, migration,
//! period). Prints a Markdown table per protocol; exits
//! non-zero on the first invariant that does not hold, naming protocol, seed and step.

mod history;
mod migration;
mod period;
mod protocols;

use protocols::Protocol;
use reliability::{BoxError, Res, Rig};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long after a kill the check waits for requests the child had already sent.
const SETTLE: Duration = Duration::from_millis(250);

/// What the child prints: `ready` once connected, `step i` before step `i`, `done`.
enum Line {
    Ready,
    Step(usize),
    Done,
}

fn parse_line(line: &str) -> Option<Line> {
    match line.split_once(' ') {
        Some(("step", i)) => i.parse().ok().map(Line::Step),
        _ if line == "ready" => Some(Line::Ready),
        _ if line == "done" => Some(Line::Done),
        _ => None,
    }
}

struct Options {
    kills: u32,
    seed: u64,
    only: Option<Protocol>,
}

fn options(args: &[String]) -> Res<Options> {
    let mut o = Options {
        kills: 20,
        seed: 1,
        only: None,
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} takes a value"));
        match arg.as_str() {
            "--kills" => o.kills = value()?.parse()?,
            "--seed" => o.seed = value()?.parse()?,
            "--only" => {
                let name = value()?;
                o.only = Some(Protocol::parse(name).ok_or_else(|| format!("no protocol {name}"))?)
            }
            other => return Err(format!("unknown option {other}").into()),
        }
    }
    Ok(o)
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("child") {
        return child(&args[1..]);
    }
    let options = options(&args)?;
    let runtime = tokio::runtime::Runtime::new()?;
    let endpoint = dynamo_model::local::shared_endpoint()?;
    let protocols = Protocol::ALL
        .into_iter()
        .filter(|p| options.only.is_none_or(|o| o == *p));
    for protocol in protocols {
        let report = runtime.block_on(campaign(protocol, &endpoint, &options))?;
        println!("{report}");
    }
    Ok(())
}

/// The child: connects, announces `ready`, runs the protocol announcing each step.
fn child(args: &[String]) -> Res<()> {
    let [name, seed, table, endpoint] = args else {
        return Err("child PROTOCOL SEED TABLE ENDPOINT".into());
    };
    let protocol = Protocol::parse(name).ok_or("no such protocol")?;
    let seed: u64 = seed.parse()?;
    let runtime = tokio::runtime::Runtime::new()?;
    let db =
        dynamo_model::Db::<Rig>::new(dynamo_model::local::client_for(endpoint), table.as_str());
    let mut out = std::io::stdout().lock();
    let mut say = |line: String| {
        // A line not written means a step not announced: the check then allows less.
        let _ = writeln!(out, "{line}").and_then(|()| out.flush());
    };
    say("ready".into());
    runtime.block_on(protocol.run(&db, seed, &mut |i| say(format!("step {i}"))))?;
    say("done".into());
    Ok(())
}

/// A child process running `protocol`, and its announcements as they arrive.
struct Child {
    process: std::process::Child,
    lines: mpsc::Receiver<(Instant, Line)>,
}

fn spawn(protocol: Protocol, seed: u64, table: &str, endpoint: &str) -> Res<Child> {
    let mut process = Command::new(std::env::current_exe()?)
        .args(["child", protocol.name(), &seed.to_string(), table, endpoint])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let stdout = process.stdout.take().ok_or("the child's stdout")?;
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(line) = parse_line(&line)
                && tx.send((Instant::now(), line)).is_err()
            {
                return;
            }
        }
    });
    Ok(Child { process, lines })
}

impl Child {
    /// Waits for `ready` (the child's start-up is not the protocol's).
    fn ready(&self) -> Res<Instant> {
        match self.lines.recv_timeout(Duration::from_secs(60))? {
            (at, Line::Ready) => Ok(at),
            _ => Err("the child did not announce ready first".into()),
        }
    }

    /// Kills the child (SIGKILL): the last step it announced, and when it announced
    /// `done` if it finished first.
    fn kill(mut self) -> Res<(Option<usize>, Option<Instant>)> {
        self.process.kill()?;
        self.process.wait()?;
        Ok(self.drain())
    }

    /// Waits for the child to finish on its own; when it announced `done`.
    fn finish(mut self) -> Res<Instant> {
        let status = self.process.wait()?;
        if !status.success() {
            let mut stderr = String::new();
            if let Some(mut pipe) = self.process.stderr.take() {
                std::io::Read::read_to_string(&mut pipe, &mut stderr)?;
            }
            return Err(format!("the child failed without a kill ({status}): {stderr}").into());
        }
        let (_, done) = self.drain();
        done.ok_or_else(|| "the child did not announce done".into())
    }

    fn drain(&self) -> (Option<usize>, Option<Instant>) {
        let (mut last, mut done) = (None, None);
        // The reader thread ends at the pipe's end, which the kill closed.
        while let Ok((at, line)) = self.lines.recv_timeout(Duration::from_secs(5)) {
            match line {
                Line::Step(i) => last = Some(i),
                Line::Done => done = Some(at),
                Line::Ready => {}
            }
        }
        (last, done)
    }
}

/// How long the protocol runs once the child is ready: five runs to the end.
async fn calibrate(protocol: Protocol, endpoint: &str, seed: u64) -> Res<Vec<Duration>> {
    let mut took = Vec::new();
    for run in 0..5 {
        let db = fresh(protocol, seed + run).await?;
        let child = spawn(protocol, seed + run, db.table_name(), endpoint)?;
        let beside = protocol.beside(&db, seed + run);
        let ready = child.ready()?;
        let done = tokio::task::block_in_place(|| child.finish())?;
        took.push(done - ready);
        protocol
            .check(&db, seed + run, Some(protocol.steps().len()), beside)
            .await
            .map_err(|e| format!("{} without a kill: {e}", protocol.name()))?;
    }
    Ok(took)
}

/// The protocol's duration as the latest five runs to the end measured it (their median):
/// the server speeds up as its JIT warms, so early runs overstate it.
fn recent_median(took: &[Duration]) -> Duration {
    let mut recent = took[took.len().saturating_sub(5)..].to_vec();
    recent.sort();
    recent
        .get(recent.len() / 2)
        .copied()
        .unwrap_or(Duration::from_secs(1))
}

/// A fresh table on the shared DynamoDB Local (the child's `endpoint`), prepared for
/// `protocol`.
async fn fresh(protocol: Protocol, seed: u64) -> Res<dynamo_model::local::TempTable<Rig>> {
    let db = dynamo_model::local::fresh_table::<Rig>().await?;
    protocol.prepare(&db, seed).await?;
    Ok(db)
}

/// `kills` kills of `protocol`, each on a fresh table; the report's Markdown.
async fn campaign(protocol: Protocol, endpoint: &str, options: &Options) -> Res<String> {
    let mut took = calibrate(protocol, endpoint, options.seed).await?;
    let steps = protocol.steps();
    // Kills per interrupted step (index `steps.len()`: after the last step finished).
    let mut at_step = vec![0u32; steps.len() + 2];
    let mut outcomes = std::collections::BTreeMap::<String, u32>::new();
    let mut rng = fastrand::Rng::with_seed(options.seed);
    let started = Instant::now();
    for kill in 0..options.kills {
        let seed = options.seed * 1_000_000 + u64::from(kill);
        let db = fresh(protocol, seed).await?;
        let child = spawn(protocol, seed, db.table_name(), endpoint)?;
        let beside = protocol.beside(&db, seed);
        // Uniform over the protocol's run, and a little past it.
        let delay = recent_median(&took).mul_f64(rng.f64() * 1.1);
        let ready = tokio::task::block_in_place(|| -> Res<Instant> {
            let ready = child.ready()?;
            std::thread::sleep(delay);
            Ok(ready)
        })?;
        let (last, done) = child.kill()?;
        took.extend(done.map(|done| done - ready));
        // A request the child had sent when it died may still reach the server and be
        // applied: what a real crash leaves too. Checking waits for those.
        tokio::time::sleep(SETTLE).await;
        let (slot, last) = match (last, done) {
            (_, Some(_)) => (steps.len() + 1, Some(steps.len())),
            (None, None) => (0, None),
            (Some(i), None) => (i + 1, Some(i)),
        };
        at_step[slot] += 1;
        let found = protocol.check(&db, seed, last, beside).await.map_err(|e| {
            format!(
                "{}: kill {kill} (seed {seed}, {delay:?} after ready, last step {last:?}): {e}",
                protocol.name()
            )
        })?;
        *outcomes.entry(found).or_default() += 1;
    }
    Ok(report(
        protocol,
        options.kills,
        recent_median(&took),
        started.elapsed(),
        &at_step,
        &outcomes,
    ))
}

fn report(
    protocol: Protocol,
    kills: u32,
    duration: Duration,
    took: Duration,
    at_step: &[u32],
    outcomes: &std::collections::BTreeMap<String, u32>,
) -> String {
    let steps = protocol.steps();
    let mut out = format!(
        "### {} ({kills} kills; the protocol runs {:.0} ms unkilled; {:.1} s in all)\n\n\
         Invariant: {}. Held after every kill.\n\n| killed | kills |\n| --- | --- |\n",
        protocol.name(),
        duration.as_secs_f64() * 1000.0,
        took.as_secs_f64(),
        protocol.invariant()
    );
    out += &format!("| before the first step | {} |\n", at_step[0]);
    for (i, name) in steps.iter().enumerate() {
        out += &format!("| once `{name}` had begun | {} |\n", at_step[i + 1]);
    }
    out += &format!(
        "| after the last step (finished) | {} |\n\n| state found | kills |\n| --- | --- |\n",
        at_step[steps.len() + 1]
    );
    for (found, n) in outcomes {
        out += &format!("| {found} | {n} |\n");
    }
    out
}
