//! Starts one DynamoDB Local and keeps it until its standard input closes: a server that
//! several processes share (`.ci/run` runs the examples and the harnesses on one, through
//! `DYNAMODB_ENDPOINT`, instead of a Java start and warm-up each). Prints the endpoint on
//! the first line of its output; stops the server when its input reaches its end,
//! however the shell that holds the input ends.
//!
//! ```sh
//! coproc LOCAL { target/debug/local; }
//! read -r endpoint <&"${LOCAL[0]}"
//! DYNAMODB_ENDPOINT=$endpoint target/debug/forum
//! exec {LOCAL[1]}>&-; wait "$LOCAL_PID"
//! ```

use dynamo_model::local::LocalInstance;
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let instance = LocalInstance::start()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", instance.endpoint())?;
    out.flush()?;
    // Until the end of the input: whatever arrives is not read as a command.
    std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink())?;
    drop(instance);
    Ok(())
}
